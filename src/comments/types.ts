/**
 * Pull-request comments: the preview posts one comment per pull request (GitHub) or merge request
 * (GitLab) and edits it in place on every push, finding it again by a hidden marker.
 */

/** Where the comment goes and who writes it. Tokens are never logged or printed. */
export interface GithubTarget {
  platform: 'github';
  /** REST API root, e.g. `https://api.github.com` (GITHUB_API_URL). */
  apiUrl: string;
  token: string;
  owner: string;
  repo: string;
  /** Pull-request number (a pull request is an issue for comments). */
  number: number;
}

export interface GitlabTarget {
  platform: 'gitlab';
  /** API v4 root, e.g. `https://gitlab.example.com/api/v4` (CI_API_V4_URL). */
  apiUrl: string;
  token: string;
  /** `PRIVATE-TOKEN` (personal, project or group access token) or `JOB-TOKEN`. */
  tokenHeader: 'PRIVATE-TOKEN' | 'JOB-TOKEN';
  /** Numeric id or `group/project` path (CI_PROJECT_ID). */
  project: string;
  /** Merge-request IID (CI_MERGE_REQUEST_IID). */
  number: number;
}

export type CommentTarget = GithubTarget | GitlabTarget;

export interface UpsertOptions {
  /** The comment's first line; a comment starting with it is ours. */
  marker: string;
  /**
   * Only comments by this login count as ours. Default: the token's user (`GET /user`); on GitHub, an app's token (GITHUB_TOKEN)
   * has none, and then only a bot account's comment may be ours; a GitLab job token: any author.
   */
  author?: string;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  /** GitLab: the largest answer read, in bytes (default MAX_GITLAB_ANSWER_BYTES; tests lower it). */
  maxAnswerBytes?: number;
}

export interface UpsertResult {
  action: 'created' | 'updated';
  id: string;
  /** Link to the comment, when the platform returns one. */
  url?: string;
  /** Our other marked comments, deleted (see marker.ts `extraOfOurs`), when there were any. */
  deleted?: string[];
}

/**
 * Writing the comment failed. `reason` says why, for the caller's decision (the CLI falls back to the
 * job summary): `forbidden` (401/403: a read-only token, e.g. a pull request from a fork), `not-found`
 * (404: wrong repository or number, or no access), `rejected` (other 4xx), `unavailable` (5xx, network, and a rate
 * limit: `rateLimit`).
 */
export class CommentError extends Error {
  override readonly name = 'CommentError';
  constructor(
    message: string,
    readonly reason: 'forbidden' | 'not-found' | 'rejected' | 'unavailable',
    readonly status?: number,
  ) {
    super(message);
  }
}

type Headers = Record<string, string | string[] | number | undefined>;

function header(headers: Headers | undefined, name: string): string | undefined {
  const v = headers?.[name];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined ? undefined : String(one).trim();
}

/**
 * When an answer is a rate limit, what to say: `rate limited (retry after N s)`. A 429; or a 403 that GitHub gives for
 * its primary limit (`x-ratelimit-remaining: 0`, until `x-ratelimit-reset`) or a secondary one (`retry-after`, or only
 * the message). Such a 403 is no verdict on the token or on whose comment it is: it must not read as a fork's
 * read-only token, nor as "not ours" (which posts a second comment). Otherwise undefined.
 */
export function rateLimit(status: number | undefined, headers: Headers | undefined, message: string, nowMs = Date.now()): string | undefined {
  const remaining = header(headers, 'x-ratelimit-remaining');
  const retryAfter = header(headers, 'retry-after');
  const limited =
    status === 429 ||
    (status === 403 && (remaining === '0' || retryAfter !== undefined || /\brate limit/i.test(message)));
  if (!limited) return undefined;
  let seconds: number | undefined;
  if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) seconds = Number(retryAfter);
  else if (retryAfter !== undefined && Number.isFinite(Date.parse(retryAfter))) seconds = Math.max(0, Math.ceil((Date.parse(retryAfter) - nowMs) / 1000));
  else {
    const reset = header(headers, 'x-ratelimit-reset') ?? header(headers, 'ratelimit-reset');
    // GitHub: an epoch second; GitLab's RateLimit-Reset: one too
    if (reset !== undefined && /^\d+$/.test(reset)) seconds = Math.max(0, Number(reset) - Math.floor(nowMs / 1000));
  }
  return seconds !== undefined ? `rate limited (retry after ${seconds} s)` : 'rate limited (retry later)';
}

/** A 401's hint: the platform does not know the token (a read-only token is a 403). */
export const INVALID_TOKEN = 'the token is not valid: expired, revoked or mistyped';

export function reasonForStatus(status: number | undefined): CommentError['reason'] {
  if (status === 401 || status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  if (status !== undefined && status >= 400 && status < 500) return 'rejected';
  return 'unavailable';
}
