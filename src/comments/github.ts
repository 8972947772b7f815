/**
 * GitHub: create or update the preview's comment on a pull request with Octokit, using three REST calls:
 * list the issue's comments (paginated), update ours (found by the marker), or create it.
 */
import { Octokit } from '@octokit/rest';
import { redactText } from '../util/redact.js';
import { extraOfOurs, findOurs, fitBody, GITHUB_BODY_LIMIT, hasMarker, MAX_COMMENT_PAGES } from './marker.js';
import { CommentError, INVALID_TOKEN, rateLimit, reasonForStatus, type GithubTarget, type UpsertOptions, type UpsertResult } from './types.js';

const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export function githubClient(target: GithubTarget, timeoutMs = 30_000): Octokit {
  const octokit = new Octokit({
    auth: target.token,
    baseUrl: target.apiUrl.replace(/\/+$/, ''),
    userAgent: 'govops-preview',
    log: silent,
  });
  octokit.hook.before('request', (options) => {
    options.request = { ...options.request, signal: AbortSignal.timeout(timeoutMs) };
  });
  // Octokit reads an answer cut short (or not JSON) as text, an empty one as `[]` once paginated: a listing would look
  // empty and a second comment be posted, a create look done with no id. Every answer these calls get is JSON (but
  // a delete's 204).
  octokit.hook.after('request', (response) => {
    if (response.status !== 204 && (typeof response.data !== 'object' || response.data === null || response.data instanceof ArrayBuffer)) {
      throw new Error(`the answer (${response.status}) is not JSON: cut short, or not from GitHub`);
    }
  });
  return octokit;
}

/** An Octokit failure as a CommentError (status and GitHub's message; never the token or headers). */
function failure(what: string, err: unknown): CommentError {
  // Octokit gives a request that got no answer (refused, reset, timed out) status 500 and no response: that is no
  // status of GitHub's, and "failed (500)" would send the reader to GitHub's status page for a network problem
  const answered = (err as { response?: unknown }).response !== undefined;
  const status = answered && typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : undefined;
  // its first line, redacted before it is split (src/util/cut.ts): a value of several lines would not be found after
  const detail = err instanceof Error ? redactText(err.message).split('\n')[0] : String(err);
  const limited = rateLimit(status, (err as { response?: { headers?: Record<string, string | number | undefined> } }).response?.headers, detail ?? '');
  if (limited !== undefined) return new CommentError(`GitHub: ${what} failed (${status}, ${limited}): ${detail}`, 'unavailable', status);
  const reason = reasonForStatus(status);
  const hint =
    status === 401
      ? ` (${INVALID_TOKEN})`
      : reason === 'forbidden'
        ? ' (the token cannot write comments: a pull request from a fork gets a read-only token; otherwise grant `pull-requests: write`)'
        : '';
  return new CommentError(`GitHub: ${what} failed${status !== undefined ? ` (${status})` : ''}: ${detail}${hint}`, reason, status);
}

/** A marked comment as listed: its author's login and whether that account is a bot (an app's, GITHUB_TOKEN's). */
interface Listed {
  id: string;
  body: string;
  author?: string;
  bot: boolean;
}

/**
 * Whose marked comments are ours: `--author` when given, else the token's user (`GET /user`: a personal token's, a
 * user-to-server token's). An app's installation token (GITHUB_TOKEN) has no user (403): then only comments written by
 * a bot account are candidates, which a pull request's author cannot write. Without this, a marked comment the
 * author posted first was ours, and a token with write access (which may edit anyone's comment) wrote the preview into
 * it, for the author to rewrite afterwards (docs/decisions.md, as GitLab's notes).
 */
async function commentAuthor(octokit: Octokit, opts: UpsertOptions): Promise<{ author: string } | { botsOnly: true }> {
  if (opts.author !== undefined && opts.author !== '') return { author: opts.author };
  try {
    const r = await octokit.rest.users.getAuthenticated();
    const login = (r.data as { login?: unknown }).login;
    if (typeof login === 'string' && login !== '') return { author: login };
  } catch (err) {
    const f = failure("reading the token's user", err);
    // 403 without a rate limit (failure() makes that "unavailable"): an app's token, which has no user
    if (!(f.reason === 'forbidden' && f.status === 403)) throw f;
    return { botsOnly: true };
  }
  throw new CommentError("GitHub: reading the token's user: the answer has no login", 'unavailable', 200);
}

export async function upsertGithubComment(target: GithubTarget, body: string, opts: UpsertOptions): Promise<UpsertResult> {
  const octokit = githubClient(target, opts.timeoutMs);
  const text = fitBody(body, opts.marker, GITHUB_BODY_LIMIT);
  const where = { owner: target.owner, repo: target.repo };
  let listed: Listed[];
  try {
    // Bounded as GitLab's (100 pages of 100), and only the comments that carry the marker kept: the others, written by
    // anyone who can comment, are never held.
    let pages = 0;
    listed = await octokit.paginate(octokit.rest.issues.listComments, { ...where, issue_number: target.number, per_page: 100 }, (response, done) => {
      if (++pages >= MAX_COMMENT_PAGES) done();
      return response.data
        .filter((c) => hasMarker(c.body ?? '', opts.marker))
        .map((c) => ({ id: String(c.id), body: c.body ?? '', ...(c.user?.login ? { author: c.user.login } : {}), bot: c.user?.type === 'Bot' }));
    });
  } catch (err) {
    throw failure(`listing the comments of #${target.number}`, err);
  }
  // the token's user is asked only when there is a marked comment to tell apart
  const whose = listed.length > 0 ? await commentAuthor(octokit, opts) : undefined;
  const author = whose && 'author' in whose ? whose.author : undefined;
  const existing = whose && 'botsOnly' in whose ? listed.filter((c) => c.bot) : listed;
  const ours = findOurs(existing, opts.marker, author);
  if (ours) {
    try {
      const r = await octokit.rest.issues.updateComment({ ...where, comment_id: Number(ours.id), body: text });
      const deleted: string[] = [];
      for (const extra of extraOfOurs(existing, ours, opts.marker, author)) {
        // best effort: a duplicate left for now does not make the preview fail
        await octokit.rest.issues.deleteComment({ ...where, comment_id: Number(extra.id) }).then(() => deleted.push(extra.id), () => undefined);
      }
      return { action: 'updated', id: String(r.data.id), ...(r.data.html_url ? { url: r.data.html_url } : {}), ...(deleted.length ? { deleted } : {}) };
    } catch (err) {
      const f = failure(`updating comment ${ours.id}`, err);
      // A comment taken for ours that cannot be edited after all (deleted meanwhile; another bot's): post our own instead.
      if (f.reason !== 'forbidden' && f.reason !== 'not-found') throw f;
    }
  }
  try {
    const r = await octokit.rest.issues.createComment({ ...where, issue_number: target.number, body: text });
    return { action: 'created', id: String(r.data.id), ...(r.data.html_url ? { url: r.data.html_url } : {}) };
  } catch (err) {
    throw failure(`creating a comment on #${target.number}`, err);
  }
}
