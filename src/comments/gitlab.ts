/**
 * GitLab: create or update the preview's note on a merge request (notes API): list the notes
 * (paginated), update ours (found by the marker), or create it.
 */
import { redactThenCut } from '../util/cut.js';
import { redactText } from '../util/redact.js';
import { requestUrl } from '../util/undici.js';
import { extraOfOurs, findOurs, fitBody, hasMarker, GITLAB_BODY_LIMIT, MAX_COMMENT_PAGES } from './marker.js';
import { CommentError, INVALID_TOKEN, rateLimit, reasonForStatus, type GitlabTarget, type UpsertOptions, type UpsertResult } from './types.js';

/**
 * The largest answer read (a page of 100 notes, each up to GitLab's 1,000,000 characters, is ~100 MB at most):
 * a larger one, or one that never ends, fails instead of filling the memory.
 */
export const MAX_GITLAB_ANSWER_BYTES = 128 * 1024 * 1024;

/** The answer's text, or a CommentError once it passes `limit` bytes (the rest is not read). */
async function textUpTo(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > limit) {
      body.destroy();
      throw new CommentError(`GitLab: ${what}: the answer is larger than ${limit} bytes`, 'unavailable');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes).toString('utf8');
}

interface Note {
  id: number | string;
  body?: string;
  system?: boolean;
  author?: { username?: string };
}


async function call(
  target: GitlabTarget,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  what: string,
  timeoutMs: number,
  body?: unknown,
  maxBytes = MAX_GITLAB_ANSWER_BYTES,
): Promise<{ data: unknown; nextPage?: string }> {
  const url = `${target.apiUrl.replace(/\/+$/, '')}${path}`;
  let res;
  try {
    res = await requestUrl(url, {
      method,
      headers: {
        [target.tokenHeader]: target.token,
        accept: 'application/json',
        'user-agent': 'govops-preview',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (err) {
    throw new CommentError(`GitLab: ${what} failed: ${err instanceof Error ? err.message : String(err)}`, 'unavailable');
  }
  let text: string;
  try {
    text = await textUpTo(res.body, maxBytes, what);
  } catch (err) {
    // the connection cut or timed out in the middle of the answer: as when it is refused
    if (err instanceof CommentError) throw err;
    throw new CommentError(`GitLab: ${what} failed: ${err instanceof Error ? err.message : String(err)}`, 'unavailable');
  }
  if (res.statusCode >= 300) {
    let message: string;
    try {
      const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
      message = redactText(JSON.stringify(parsed.message ?? parsed.error ?? parsed));
    } catch {
      // not JSON: the start of the text, redacted before it is cut (src/util/cut.ts)
      message = redactThenCut(text, 200, () => '');
    }
    const limited = rateLimit(res.statusCode, res.headers, message);
    if (limited !== undefined) throw new CommentError(`GitLab: ${what} failed (${res.statusCode}, ${limited}): ${message}`, 'unavailable', res.statusCode);
    const reason = reasonForStatus(res.statusCode);
    const hint =
      res.statusCode === 401
        ? ` (${INVALID_TOKEN})`
        : reason === 'forbidden'
          ? ' (the token cannot write notes: use a project access token with the api scope, role Reporter or above)'
          : '';
    throw new CommentError(`GitLab: ${what} failed (${res.statusCode}): ${message}${hint}`, reason, res.statusCode);
  }
  let data: unknown;
  try {
    data = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new CommentError(`GitLab: ${what}: the answer is not JSON`, 'unavailable', res.statusCode);
  }
  const next = res.headers['x-next-page'];
  const nextPage = typeof next === 'string' && next.trim() !== '' ? next.trim() : undefined;
  return nextPage !== undefined ? { data, nextPage } : { data };
}

/**
 * Whose notes are ours: `--author` when given, else the user of a PRIVATE-TOKEN (`GET /user`: a project access
 * token's bot user). A merge request's author can post a note that starts with the marker before ours; without an
 * author it would be taken for ours, and then edited (a Maintainer's token may edit anyone's note: the preview in a
 * note its author can change afterwards) or, when it cannot be, a new note posted on every push (docs/decisions.md).
 * A job token cannot read its user (nor write notes): any author, as before.
 */
async function noteAuthor(target: GitlabTarget, opts: UpsertOptions, timeoutMs: number): Promise<string | undefined> {
  if (opts.author !== undefined && opts.author !== '') return opts.author;
  if (target.tokenHeader !== 'PRIVATE-TOKEN') return undefined;
  const r = await call(target, 'GET', '/user', "reading the token's user", timeoutMs, undefined, 1024 * 1024);
  const username = (r.data as { username?: unknown } | undefined)?.username;
  if (typeof username !== 'string' || username === '') {
    throw new CommentError("GitLab: reading the token's user: the answer has no username", 'unavailable', 200);
  }
  return username;
}

export async function upsertGitlabNote(target: GitlabTarget, body: string, opts: UpsertOptions): Promise<UpsertResult> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const text = fitBody(body, opts.marker, GITLAB_BODY_LIMIT);
  const base = `/projects/${encodeURIComponent(target.project)}/merge_requests/${target.number}/notes`;
  // Only the notes that carry the marker are kept, page by page (as for GitHub): the others, written by anyone who can
  // comment, are never held.
  const candidates: Array<{ id: string; body: string; author?: string }> = [];
  let page: string | undefined = '1';
  for (let i = 0; page !== undefined && i < MAX_COMMENT_PAGES; i++) {
    const r = await call(target, 'GET', `${base}?sort=asc&order_by=created_at&per_page=100&page=${encodeURIComponent(page)}`, `listing the notes of !${target.number}`, timeoutMs, undefined, opts.maxAnswerBytes);
    if (!Array.isArray(r.data)) throw new CommentError(`GitLab: listing the notes of !${target.number}: the answer is not a list`, 'unavailable');
    for (const n of r.data as Note[]) {
      const text = typeof n.body === 'string' ? n.body : '';
      if (n.system === true || !hasMarker(text, opts.marker)) continue;
      candidates.push({ id: String(n.id), body: text, ...(n.author?.username ? { author: n.author.username } : {}) });
    }
    page = r.nextPage;
  }
  // the token's user is asked only when there is a marked note to tell apart
  const author = candidates.length > 0 ? await noteAuthor(target, opts, timeoutMs) : undefined;
  const ours = findOurs(candidates, opts.marker, author);
  if (ours) {
    try {
      const r = await call(target, 'PUT', `${base}/${encodeURIComponent(ours.id)}`, `updating note ${ours.id}`, timeoutMs, { body: text });
      const deleted: string[] = [];
      for (const extra of extraOfOurs(candidates, ours, opts.marker, author)) {
        // best effort: a duplicate left for now does not make the preview fail
        await call(target, 'DELETE', `${base}/${encodeURIComponent(extra.id)}`, `deleting note ${extra.id}`, timeoutMs).then(() => deleted.push(extra.id), () => undefined);
      }
      return { action: 'updated', id: String((r.data as Note | undefined)?.id ?? ours.id), ...(deleted.length ? { deleted } : {}) };
    } catch (err) {
      // A note by someone else carrying the marker cannot be edited: post our own instead.
      if (!(err instanceof CommentError) || (err.reason !== 'forbidden' && err.reason !== 'not-found')) throw err;
    }
  }
  const r = await call(target, 'POST', base, `creating a note on !${target.number}`, timeoutMs, { body: text });
  return { action: 'created', id: String((r.data as Note | undefined)?.id ?? '') };
}
