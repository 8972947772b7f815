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
  /** Only comments by this login count as ours (default: GitHub any author; GitLab a PRIVATE-TOKEN's user, `GET /user`). */
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
}

/**
 * Writing the comment failed. `reason` says why, for the caller's decision (the CLI falls back to the
 * job summary): `forbidden` (401/403: a read-only token, e.g. a pull request from a fork), `not-found`
 * (404: wrong repository or number, or no access), `rejected` (other 4xx), `unavailable` (5xx, network).
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

export function reasonForStatus(status: number | undefined): CommentError['reason'] {
  if (status === 401 || status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  if (status !== undefined && status >= 400 && status < 500) return 'rejected';
  return 'unavailable';
}
