/**
 * A local stand-in for the parts of GitHub's REST API and GitLab's notes API that the preview's
 * comment code uses, on 127.0.0.1 (port 0). It records every request (method, path, query, auth
 * header, JSON body), checks the token, paginates (GitHub: Link header; GitLab: x-next-page), and can
 * be made read-only (403 on writes, as a fork's token is).
 *
 * GitHub:  GET   {prefix}/repos/{owner}/{repo}/issues/{n}/comments   list (per_page, page)
 *          POST  {prefix}/repos/{owner}/{repo}/issues/{n}/comments   create { body }
 *          PATCH {prefix}/repos/{owner}/{repo}/issues/comments/{id}  update { body }
 *          DELETE {prefix}/repos/{owner}/{repo}/issues/comments/{id} delete
 *          GET   {prefix}/user                                       the token's user (a bot's token, e.g.
 *                                                                    GITHUB_TOKEN, gets 403 as an app's does)
 * GitLab:  GET   /api/v4/projects/{id}/merge_requests/{iid}/notes          list (per_page, page)
 *          POST  /api/v4/projects/{id}/merge_requests/{iid}/notes          create { body }
 *          PUT   /api/v4/projects/{id}/merge_requests/{iid}/notes/{note}   update { body }
 *          DELETE /api/v4/projects/{id}/merge_requests/{iid}/notes/{note}  delete
 *          GET   /api/v4/user                                              the token's user (PRIVATE-TOKEN only)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface ForgeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** GitHub: the Authorization header; GitLab: PRIVATE-TOKEN or JOB-TOKEN as `NAME value`. */
  auth?: string;
  userAgent?: string;
  contentType?: string;
  body?: unknown;
}

export interface ForgeComment {
  id: number;
  body: string;
  author: string;
  /** The GitLab issue/MR thread or the GitHub issue it belongs to. */
  thread: string;
  system?: boolean;
}

export interface ForgeOptions {
  githubToken?: string;
  gitlabToken?: string;
  /** The login the token writes as. */
  login?: string;
  /** GitHub path prefix (GitHub Enterprise Server serves the API under /api/v3). */
  githubPrefix?: string;
}

export interface Forge {
  url: string;
  requests: ForgeRequest[];
  comments: ForgeComment[];
  /** Writes answer 403 (a read-only token). */
  readOnly: boolean;
  /** The token may edit and delete comments by others (GitLab: the Maintainer role or above; GitHub: write access). */
  editOthers: boolean;
  /** The message of a read-only answer, when set (e.g. one holding control characters). */
  readOnlyMessage?: string;
  /** Every request answers this status (e.g. 502), when set. */
  failAll?: number;
  /** The next request with this method answers this status, headers and message (then it is cleared). */
  failNext?: { method: string; status: number; headers?: Record<string, string>; message: string };
  add(thread: string, body: string, author: string, extra?: Partial<ForgeComment>): ForgeComment;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startForge(options: ForgeOptions = {}): Promise<Forge> {
  const githubToken = options.githubToken ?? 'gh-test-token';
  const gitlabToken = options.gitlabToken ?? 'gl-test-token';
  const login = options.login ?? 'github-actions[bot]';
  const prefix = options.githubPrefix ?? '';
  let nextId = 1000;
  const forge: Forge = {
    url: '',
    requests: [],
    comments: [],
    readOnly: false,
    editOthers: false,
    add(thread, body, author, extra = {}) {
      const c: ForgeComment = { id: ++nextId, body, author, thread, ...extra };
      forge.comments.push(c);
      return c;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const github = (req: IncomingMessage, res: ServerResponse, path: string, query: Record<string, string>, body: unknown): void => {
    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${githubToken}` && auth !== `Bearer ${githubToken}`) return send(res, 401, { message: 'Bad credentials' });
    if (path === '/user' && req.method === 'GET') {
      // an app's installation token (GITHUB_TOKEN) has no user: GitHub answers 403
      if (login.endsWith('[bot]')) return send(res, 403, { message: 'Resource not accessible by integration' });
      return send(res, 200, { login, type: 'User' });
    }
    const list = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(path);
    const one = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)$/.exec(path);
    const gh = (c: ForgeComment, owner: string, repo: string) => ({
      id: c.id,
      body: c.body,
      user: { login: c.author, type: c.author.endsWith('[bot]') ? 'Bot' : 'User' },
      html_url: `https://github.example/${owner}/${repo}/issues/${c.thread.split('#')[1]}#issuecomment-${c.id}`,
    });
    if (list && req.method === 'GET') {
      const thread = `${list[1]}/${list[2]}#${list[3]}`;
      const all = forge.comments.filter((c) => c.thread === thread);
      const per = Math.min(Number(query.per_page ?? 30), 100);
      const page = Number(query.page ?? 1);
      const items = all.slice((page - 1) * per, page * per);
      const headers: Record<string, string> = {};
      if (page * per < all.length) {
        headers.link = `<${forge.url}${prefix}${path}?per_page=${per}&page=${page + 1}>; rel="next"`;
      }
      return send(res, 200, items.map((c) => gh(c, list[1]!, list[2]!)), headers);
    }
    if (list && req.method === 'POST') {
      if (forge.readOnly) return send(res, 403, { message: forge.readOnlyMessage ?? 'Resource not accessible by integration' });
      const text = (body as { body?: unknown } | undefined)?.body;
      if (typeof text !== 'string') return send(res, 422, { message: 'body is required' });
      if (text.length > 65_536) return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' });
      const c = forge.add(`${list[1]}/${list[2]}#${list[3]}`, text, login);
      return send(res, 201, gh(c, list[1]!, list[2]!));
    }
    if (one && req.method === 'PATCH') {
      if (forge.readOnly) return send(res, 403, { message: forge.readOnlyMessage ?? 'Resource not accessible by integration' });
      const c = forge.comments.find((x) => x.id === Number(one[3]) && x.thread.startsWith(`${one[1]}/${one[2]}#`));
      if (!c) return send(res, 404, { message: 'Not Found' });
      if (c.author !== login && !forge.editOthers) return send(res, 403, { message: 'You cannot edit this comment' });
      const text = (body as { body?: unknown } | undefined)?.body;
      if (typeof text !== 'string') return send(res, 422, { message: 'body is required' });
      if (text.length > 65_536) return send(res, 422, { message: 'Body is too long (maximum is 65536 characters)' });
      c.body = text;
      return send(res, 200, gh(c, one[1]!, one[2]!));
    }
    if (one && req.method === 'DELETE') {
      if (forge.readOnly) return send(res, 403, { message: forge.readOnlyMessage ?? 'Resource not accessible by integration' });
      const i = forge.comments.findIndex((x) => x.id === Number(one[3]) && x.thread.startsWith(`${one[1]}/${one[2]}#`));
      if (i < 0) return send(res, 404, { message: 'Not Found' });
      if (forge.comments[i]!.author !== login && !forge.editOthers) return send(res, 403, { message: 'You cannot delete this comment' });
      forge.comments.splice(i, 1);
      res.writeHead(204);
      return void res.end();
    }
    return send(res, 404, { message: 'Not Found' });
  };

  const gitlab = (req: IncomingMessage, res: ServerResponse, path: string, query: Record<string, string>, body: unknown): void => {
    if (req.headers['private-token'] !== gitlabToken && req.headers['job-token'] !== gitlabToken) {
      return send(res, 401, { message: '401 Unauthorized' });
    }
    if (path === '/api/v4/user' && req.method === 'GET') {
      // a job token cannot read its user (GitLab answers 401 for JOB-TOKEN there)
      if (req.headers['private-token'] !== gitlabToken) return send(res, 401, { message: '401 Unauthorized' });
      return send(res, 200, { id: 1, username: login, bot: true });
    }
    const m = /^\/api\/v4\/projects\/([^/]+)\/merge_requests\/(\d+)\/notes(?:\/(\d+))?$/.exec(path);
    if (!m) return send(res, 404, { message: '404 Not Found' });
    const thread = `${decodeURIComponent(m[1]!)}!${m[2]}`;
    const gl = (c: ForgeComment) => ({ id: c.id, body: c.body, author: { username: c.author }, system: c.system ?? false });
    if (!m[3] && req.method === 'GET') {
      const all = forge.comments.filter((c) => c.thread === thread);
      const per = Math.min(Number(query.per_page ?? 20), 100);
      const page = Number(query.page ?? 1);
      const headers: Record<string, string> = { 'x-page': String(page), 'x-total': String(all.length) };
      headers['x-next-page'] = page * per < all.length ? String(page + 1) : '';
      return send(res, 200, all.slice((page - 1) * per, page * per).map(gl), headers);
    }
    const text = (body as { body?: unknown } | undefined)?.body;
    if (!m[3] && req.method === 'POST') {
      if (forge.readOnly) return send(res, 403, { message: forge.readOnlyMessage ?? '403 Forbidden' });
      if (typeof text !== 'string') return send(res, 400, { error: 'body is missing' });
      return send(res, 201, gl(forge.add(thread, text, login)));
    }
    if (m[3] && req.method === 'PUT') {
      if (forge.readOnly) return send(res, 403, { message: forge.readOnlyMessage ?? '403 Forbidden' });
      const c = forge.comments.find((x) => x.id === Number(m[3]) && x.thread === thread);
      if (!c) return send(res, 404, { message: '404 Not found' });
      if (c.author !== login && !forge.editOthers) return send(res, 403, { message: '403 Forbidden' });
      if (typeof text !== 'string') return send(res, 400, { error: 'body is missing' });
      c.body = text;
      return send(res, 200, gl(c));
    }
    if (m[3] && req.method === 'DELETE') {
      if (forge.readOnly) return send(res, 403, { message: forge.readOnlyMessage ?? '403 Forbidden' });
      const i = forge.comments.findIndex((x) => x.id === Number(m[3]) && x.thread === thread);
      if (i < 0) return send(res, 404, { message: '404 Not found' });
      if (forge.comments[i]!.author !== login && !forge.editOthers) return send(res, 403, { message: '403 Forbidden' });
      forge.comments.splice(i, 1);
      res.writeHead(204);
      return void res.end();
    }
    return send(res, 405, { message: '405 Method Not Allowed' });
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const query = Object.fromEntries(url.searchParams);
      const body = await readBody(req);
      const auth =
        req.headers.authorization ??
        (req.headers['private-token'] !== undefined ? `PRIVATE-TOKEN ${String(req.headers['private-token'])}` : undefined) ??
        (req.headers['job-token'] !== undefined ? `JOB-TOKEN ${String(req.headers['job-token'])}` : undefined);
      forge.requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query,
        ...(auth !== undefined ? { auth } : {}),
        ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
        ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        ...(body !== undefined ? { body } : {}),
      });
      if (forge.failAll !== undefined) return send(res, forge.failAll, { message: 'unavailable' });
      if (forge.failNext !== undefined && forge.failNext.method === req.method) {
        const f = forge.failNext;
        delete forge.failNext;
        return send(res, f.status, { message: f.message }, f.headers);
      }
      if (url.pathname.startsWith('/api/v4/')) return gitlab(req, res, url.pathname, query, body);
      if (prefix && !url.pathname.startsWith(prefix)) return send(res, 404, { message: 'Not Found' });
      return github(req, res, url.pathname.slice(prefix.length), query, body);
    })().catch((err: unknown) => send(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  forge.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return forge;
}
