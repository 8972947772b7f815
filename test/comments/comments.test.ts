/**
 * The comment-updating code against a local stand-in for GitHub's REST API and GitLab's notes API
 * (test/helpers/forge.ts): method, path, auth header and body of every call; create, update in place,
 * pagination, comments by others, read-only tokens (forks), the size limit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CommentError, upsertComment, type CommentTarget } from '../../src/comments/index.js';
import { fitBody, GITHUB_BODY_LIMIT } from '../../src/comments/marker.js';
import { REDACTED, registerSecrets } from '../../src/util/redact.js';
import { startServer } from '../api/server.js';
import { startForge, type Forge } from '../helpers/forge.js';

const MARKER = '<!-- govops-preview -->';
const BOT = 'github-actions[bot]';

let forge: Forge;
beforeAll(async () => {
  forge = await startForge();
});
afterAll(async () => {
  await forge.close();
});
beforeEach(() => {
  forge.requests.length = 0;
  forge.comments.length = 0;
  forge.readOnly = false;
  forge.editOthers = false;
  delete forge.failAll;
  delete forge.failNext;
});

const gh = (over: Partial<Extract<CommentTarget, { platform: 'github' }>> = {}): CommentTarget => ({
  platform: 'github',
  apiUrl: forge.url,
  token: 'gh-test-token',
  owner: 'acme',
  repo: 'gov',
  number: 7,
  ...over,
});
const gl = (over: Partial<Extract<CommentTarget, { platform: 'gitlab' }>> = {}): CommentTarget => ({
  platform: 'gitlab',
  apiUrl: `${forge.url}/api/v4`,
  token: 'gl-test-token',
  tokenHeader: 'PRIVATE-TOKEN',
  project: 'platform/gov',
  number: 12,
  ...over,
});
const calls = () => forge.requests.map((r) => `${r.method} ${r.path}`);

describe('GitHub (Octokit)', () => {
  it('no comment yet: lists the comments, then creates one (token auth, JSON body with the marker first)', async () => {
    forge.add('acme/gov#7', 'LGTM', 'alice');
    const r = await upsertComment(gh(), `${MARKER}\n### govops preview\n`, { marker: MARKER, author: BOT });
    expect(r.action).toBe('created');
    expect(calls()).toEqual(['GET /repos/acme/gov/issues/7/comments', 'POST /repos/acme/gov/issues/7/comments']);
    const [list, create] = forge.requests;
    expect(list!.query).toMatchObject({ per_page: '100' });
    for (const q of forge.requests) expect(q.auth).toBe('token gh-test-token');
    expect(create!.contentType).toMatch(/^application\/json/);
    expect(create!.body).toEqual({ body: `${MARKER}\n### govops preview\n` });
    expect(r.url).toContain(`#issuecomment-${r.id}`);
    expect(forge.comments.filter((c) => c.author === BOT)).toHaveLength(1);
  });

  it('a marked comment exists: it is updated in place (PATCH on its id), no new comment', async () => {
    forge.add('acme/gov#7', 'first!', 'alice');
    const mine = forge.add('acme/gov#7', `${MARKER}\nold`, BOT);
    forge.add('acme/gov#8', `${MARKER}\nanother PR`, BOT);
    const r = await upsertComment(gh(), `${MARKER}\nnew`, { marker: MARKER, author: BOT });
    expect(r).toMatchObject({ action: 'updated', id: String(mine.id) });
    expect(calls()).toEqual(['GET /repos/acme/gov/issues/7/comments', `PATCH /repos/acme/gov/issues/comments/${mine.id}`]);
    expect(forge.requests[1]!.body).toEqual({ body: `${MARKER}\nnew` });
    expect(forge.requests[1]!.auth).toBe('token gh-test-token');
    expect(mine.body).toBe(`${MARKER}\nnew`);
    expect(forge.comments).toHaveLength(3);
  });

  it('finds its comment on a later page (Link header pagination)', async () => {
    for (let i = 0; i < 150; i++) forge.add('acme/gov#7', `comment ${i}`, 'alice');
    const mine = forge.add('acme/gov#7', `${MARKER}\nold`, BOT);
    const r = await upsertComment(gh(), `${MARKER}\nnew`, { marker: MARKER, author: BOT });
    expect(r.action).toBe('updated');
    expect(forge.requests.filter((q) => q.method === 'GET').map((q) => q.query.page ?? '1')).toEqual(['1', '2']);
    expect(calls().at(-1)).toBe(`PATCH /repos/acme/gov/issues/comments/${mine.id}`);
  });

  it('reads at most 100 pages of comments (as for GitLab): past them, a new comment', async () => {
    for (let i = 0; i < 100 * 100; i++) forge.add('acme/gov#7', `comment ${i}`, 'alice');
    forge.add('acme/gov#7', `${MARKER}\nold`, BOT);
    const r = await upsertComment(gh(), `${MARKER}\nnew`, { marker: MARKER, author: BOT });
    expect(r.action).toBe('created');
    expect(forge.requests.filter((q) => q.method === 'GET')).toHaveLength(100);
  });

  it('a marked comment by someone else is ignored with an author, and never edited', async () => {
    const theirs = forge.add('acme/gov#7', `${MARKER}\nplease overwrite me`, 'mallory');
    const r = await upsertComment(gh(), `${MARKER}\nours`, { marker: MARKER, author: BOT });
    expect(r.action).toBe('created');
    expect(calls()).not.toContain(`PATCH /repos/acme/gov/issues/comments/${theirs.id}`);
    expect(theirs.body).toContain('please overwrite me');
  });

  it("without an author, a marked comment a pull request's author wrote first is never edited, though the token may (an app's token: only a bot's comment is ours)", async () => {
    forge.editOthers = true; // write access edits anyone's comment
    const theirs = forge.add('acme/gov#7', `${MARKER}\nno changes, merge away`, 'mallory');
    for (let i = 0; i < 3; i++) await upsertComment(gh(), `${MARKER}\npush ${i}`, { marker: MARKER });
    expect(theirs.body).toBe(`${MARKER}\nno changes, merge away`);
    expect(calls()).not.toContain(`PATCH /repos/acme/gov/issues/comments/${theirs.id}`);
    expect(forge.comments.filter((c) => c.author === BOT).map((c) => c.body)).toEqual([`${MARKER}\npush 2`]);
    // the token's user is asked only when there is a marked comment to tell apart; an app's token has none (403)
    expect(calls().slice(0, 3)).toEqual(['GET /repos/acme/gov/issues/7/comments', 'GET /user', 'POST /repos/acme/gov/issues/7/comments']);
  });

  it("an app's token: another bot's marked comment, which it cannot edit (403), leads to a new comment", async () => {
    const theirs = forge.add('acme/gov#7', `${MARKER}\nby another app`, 'other-app[bot]');
    const r = await upsertComment(gh(), `${MARKER}\nours`, { marker: MARKER });
    expect(r.action).toBe('created');
    expect(calls()).toEqual([
      'GET /repos/acme/gov/issues/7/comments',
      'GET /user',
      `PATCH /repos/acme/gov/issues/comments/${theirs.id}`,
      'POST /repos/acme/gov/issues/7/comments',
    ]);
    expect(theirs.body).toBe(`${MARKER}\nby another app`);
  });

  it("without an author, a personal token's comments are its user's (GET /user): another's, a bot's included, never edited", async () => {
    const pat = await startForge({ githubToken: 'gh-pat', login: 'ci-user' });
    try {
      pat.editOthers = true;
      const theirs = pat.add('acme/gov#7', `${MARKER}\nplanted`, 'mallory');
      const bot = pat.add('acme/gov#7', `${MARKER}\nanother app`, 'other-app[bot]');
      const target = gh({ apiUrl: pat.url, token: 'gh-pat' });
      const first = await upsertComment(target, `${MARKER}\npush 0`, { marker: MARKER });
      const second = await upsertComment(target, `${MARKER}\npush 1`, { marker: MARKER });
      expect([first.action, second.action]).toEqual(['created', 'updated']);
      expect(second.id).toBe(first.id);
      expect(pat.requests.map((q) => `${q.method} ${q.path}`)).toContain('GET /user');
      expect([theirs.body, bot.body]).toEqual([`${MARKER}\nplanted`, `${MARKER}\nanother app`]);
      expect(pat.comments.filter((c) => c.author === 'ci-user').map((c) => c.body)).toEqual([`${MARKER}\npush 1`]);
    } finally {
      await pat.close();
    }
  });

  it('a read-only token (a pull request from a fork): CommentError "forbidden"', async () => {
    forge.readOnly = true;
    const err = await upsertComment(gh(), `${MARKER}\nx`, { marker: MARKER, author: BOT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommentError);
    expect(err).toMatchObject({ reason: 'forbidden', status: 403 });
    expect((err as Error).message).toMatch(/fork/);
    expect((err as Error).message).not.toContain('gh-test-token');
  });

  it('a wrong token is "forbidden" (401), said to be invalid, not a fork\'s; a server error is "unavailable"', async () => {
    const bad = await upsertComment(gh({ token: 'wrong' }), MARKER, { marker: MARKER }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ reason: 'forbidden', status: 401 });
    expect((bad as Error).message).toMatch(/\(401\): Bad credentials.*\(the token is not valid: expired, revoked or mistyped\)/);
    expect((bad as Error).message).not.toMatch(/fork|pull-requests: write/);
    const badGl = await upsertComment(gl({ token: 'wrong' }), MARKER, { marker: MARKER }).catch((e: unknown) => e);
    expect(badGl).toMatchObject({ reason: 'forbidden', status: 401 });
    expect((badGl as Error).message).toMatch(/\(the token is not valid: expired, revoked or mistyped\)/);
    forge.failAll = 502;
    await expect(upsertComment(gh(), MARKER, { marker: MARKER })).rejects.toMatchObject({ reason: 'unavailable' });
  });

  it('GitHub Enterprise Server: the API under a path prefix', async () => {
    const ghes = await startForge({ githubPrefix: '/api/v3' });
    try {
      const r = await upsertComment(gh({ apiUrl: `${ghes.url}/api/v3/` }), `${MARKER}\nx`, { marker: MARKER });
      expect(r.action).toBe('created');
      expect(ghes.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
        'GET /api/v3/repos/acme/gov/issues/7/comments',
        'POST /api/v3/repos/acme/gov/issues/7/comments',
      ]);
    } finally {
      await ghes.close();
    }
  });

  it('a body over 65,536 characters is cut (marker kept, fences closed) instead of being refused', async () => {
    const long = `${MARKER}\n\`\`\`diff\n${'+ line\n'.repeat(20_000)}\`\`\`\n`;
    const r = await upsertComment(gh(), long, { marker: MARKER });
    expect(r.action).toBe('created');
    const sent = (forge.requests[1]!.body as { body: string }).body;
    expect(sent.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(sent.startsWith(MARKER)).toBe(true);
    expect((sent.match(/^```/gm) ?? []).length % 2).toBe(0);
    expect(sent).toContain('_(cut:');
  });
});

describe('two runs that both found no comment (a push right after the pull request was opened)', () => {
  it('GitHub: both post; the next run edits the oldest and deletes our other marked comment, never anyone else\'s', async () => {
    const runs = await Promise.all([0, 1].map((i) => upsertComment(gh(), `${MARKER}\nrun ${i}`, { marker: MARKER, author: BOT })));
    expect(runs.map((r) => r.action)).toEqual(['created', 'created']);
    const theirs = forge.add('acme/gov#7', `${MARKER}\nquoted by a person`, 'mallory');
    const [oldest] = forge.comments.filter((c) => c.author === BOT);
    const [, second] = forge.comments.filter((c) => c.author === BOT);
    const r = await upsertComment(gh(), `${MARKER}\nrun 2`, { marker: MARKER, author: BOT });
    expect(r).toEqual({ action: 'updated', id: String(oldest!.id), url: expect.any(String), deleted: [String(second!.id)] });
    expect(forge.comments.map((c) => c.body)).toEqual([`${MARKER}\nrun 2`, `${MARKER}\nquoted by a person`]);
    expect(forge.comments).toContain(theirs);
  });

  it('GitLab: the same, for our notes only', async () => {
    await Promise.all([0, 1].map((i) => upsertComment(gl(), `${MARKER}\nrun ${i}`, { marker: MARKER })));
    forge.editOthers = true;
    forge.add('platform/gov!12', `${MARKER}\nquoted by a person`, 'mallory');
    const second = forge.comments[1]!;
    const r = await upsertComment(gl(), `${MARKER}\nrun 2`, { marker: MARKER });
    expect(r).toMatchObject({ action: 'updated', deleted: [String(second.id)] });
    expect(forge.comments.map((c) => `${c.author}: ${c.body}`)).toEqual([`${BOT}: ${MARKER}\nrun 2`, `mallory: ${MARKER}\nquoted by a person`]);
  });

  it('without an author (an app\'s token: any bot\'s marked comment may be ours), nothing is deleted', async () => {
    forge.add('acme/gov#7', `${MARKER}\none`, BOT);
    forge.add('acme/gov#7', `${MARKER}\ntwo`, BOT);
    await upsertComment(gh(), `${MARKER}\nthree`, { marker: MARKER });
    expect(forge.comments.map((c) => c.body)).toEqual([`${MARKER}\nthree`, `${MARKER}\ntwo`]);
    expect(calls().filter((c) => c.startsWith('DELETE'))).toEqual([]);
  });
});

describe('rate limits', () => {
  const secondary = {
    status: 403,
    headers: { 'retry-after': '60', 'x-ratelimit-remaining': '4000' },
    message: 'You have exceeded a secondary rate limit and have been temporarily blocked from content creation. Please retry your request again later.',
  };

  it('GitHub: a rate-limited edit (403 with retry-after) is not "not ours": no second comment, no fork hint', async () => {
    const mine = forge.add('acme/gov#7', `${MARKER}\nold`, BOT);
    forge.failNext = { method: 'PATCH', ...secondary };
    const err = await upsertComment(gh(), `${MARKER}\nnew`, { marker: MARKER, author: BOT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommentError);
    expect(err).toMatchObject({ reason: 'unavailable', status: 403 });
    expect((err as Error).message).toMatch(/rate limit.*retry after 60 s/);
    expect((err as Error).message).not.toMatch(/fork/);
    expect(calls()).not.toContain('POST /repos/acme/gov/issues/7/comments');
    expect(forge.comments).toEqual([mine]);
  });

  it('GitHub: the primary limit (403, x-ratelimit-remaining: 0) and 429 are "unavailable", with when to retry', async () => {
    const reset = String(Math.floor(Date.now() / 1000) + 120);
    forge.failNext = { method: 'GET', status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }, message: 'API rate limit exceeded for installation ID 1.' };
    const primary = await upsertComment(gh(), `${MARKER}\nx`, { marker: MARKER, author: BOT }).catch((e: unknown) => e);
    expect(primary).toMatchObject({ reason: 'unavailable', status: 403 });
    expect((primary as Error).message).toMatch(/rate limit.*retry after/);
    expect((primary as Error).message).not.toMatch(/fork/);
    forge.failNext = { method: 'POST', status: 429, headers: { 'retry-after': '5' }, message: 'Too Many Requests' };
    const tooMany = await upsertComment(gh(), `${MARKER}\nx`, { marker: MARKER, author: BOT }).catch((e: unknown) => e);
    expect(tooMany).toMatchObject({ reason: 'unavailable', status: 429 });
    expect((tooMany as Error).message).toMatch(/retry after 5 s/);
  });

  it('GitLab: 429 is "unavailable", with retry-after; a rate-limited edit posts no second note', async () => {
    const mine = forge.add('platform/gov!12', `${MARKER}\nold`, BOT);
    forge.failNext = { method: 'PUT', status: 429, headers: { 'retry-after': '30' }, message: 'Retry later' };
    const err = await upsertComment(gl(), `${MARKER}\nnew`, { marker: MARKER }).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'unavailable', status: 429 });
    expect((err as Error).message).toMatch(/retry after 30 s/);
    expect(forge.comments).toEqual([mine]);
  });
});

describe('fitBody', () => {
  it('adds the marker when missing; leaves short bodies alone', () => {
    expect(fitBody('hello', MARKER, 100)).toBe(`${MARKER}\nhello`);
    expect(fitBody(`${MARKER}\nhello`, MARKER, 100)).toBe(`${MARKER}\nhello`);
  });

  const NOTE = '\n\n_(cut: the body was longer than the platform allows; see the CI job for the full text)_\n';

  it('a cut inside a longer fence (a script holding ```) closes that fence, so the note is text, not code', () => {
    const body = `${MARKER}\n<details><summary>script</summary>\n\n\`\`\`\`sql\nselect 1;\n\`\`\`\n${'select 2;\n'.repeat(500)}\`\`\`\`\n\n</details>\n`;
    const cut = fitBody(body, MARKER, 2000);
    expect(cut.length).toBeLessThanOrEqual(2000);
    expect(cut.endsWith(`\n\`\`\`\`\n</details>${NOTE}`)).toBe(true);
  });

  it('a cut inside a collapsed block closes it, so the note is not hidden in it', () => {
    const body = `${MARKER}\n<details><summary>Drift</summary>\n\n\`\`\`diff\n${'~ a: 1 -> 2\n'.repeat(500)}\`\`\`\n\n</details>\n\nafter\n`;
    const cut = fitBody(body, MARKER, 2000);
    expect(cut.length).toBeLessThanOrEqual(2000);
    expect(cut.endsWith(`\n\`\`\`\n</details>${NOTE}`)).toBe(true);
    // a `<details>` inside a code block is code, not a block to close
    const code = `${MARKER}\n\`\`\`html\n<details>\n${'x\n'.repeat(2000)}\`\`\`\n`;
    expect(fitBody(code, MARKER, 1000).endsWith(`\n\`\`\`${NOTE}`)).toBe(true);
  });
});

describe('secrets in what the platform answers, and in the body', () => {
  // A value of several lines (a key): redacted whole, before the message is split or cut.
  const KEY = 'comments-KEY-line-one\ncomments-KEY-line-two\ncomments-KEY-line-three';
  registerSecrets(KEY);

  it("GitHub: the message's first line is taken after redaction, never a line of the value", async () => {
    forge.readOnly = true;
    forge.readOnlyMessage = `cannot post ${KEY}`;
    try {
      const err = (await upsertComment(gh(), `${MARKER}\nx`, { marker: MARKER }).catch((e: unknown) => e)) as CommentError;
      expect(err).toBeInstanceOf(CommentError);
      expect(err.message).toContain(`cannot post ${REDACTED}`);
      expect(err.message).not.toContain('comments-KEY');
    } finally {
      delete forge.readOnlyMessage;
    }
  });

  it('GitLab: a connection cut in the middle of an answer is a CommentError ("unavailable"), as a refused one is', async () => {
    const server = await startServer((_req, res, { socket }) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.write('[{"id": 1, "body": "');
      setImmediate(() => socket.destroy());
    });
    try {
      const err = await upsertComment(gl({ apiUrl: `${server.url}/api/v4` }), `${MARKER}\nx`, { marker: MARKER }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CommentError);
      expect(err).toMatchObject({ reason: 'unavailable', message: expect.stringMatching(/^GitLab: listing the notes of !12 failed: /) });
    } finally {
      await server.close();
    }
  });

  it('GitHub: a connection cut in the middle of an answer is a CommentError ("unavailable")', async () => {
    const server = await startServer((_req, res, { socket }) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.write('[{"id": 1, "body": "');
      setImmediate(() => socket.destroy());
    });
    try {
      const err = await upsertComment(gh({ apiUrl: server.url }), `${MARKER}\nx`, { marker: MARKER }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CommentError);
      expect(err).toMatchObject({ reason: 'unavailable' });
    } finally {
      await server.close();
    }
  });

  it('GitHub: a connection refused is "unavailable" and claims no HTTP status GitHub never sent (Octokit says 500)', async () => {
    const server = await startServer((_req, res) => {
      res.end();
    });
    const url = server.url;
    await server.close();
    const err = (await upsertComment(gh({ apiUrl: url }), `${MARKER}\nx`, { marker: MARKER, author: BOT }).catch((e: unknown) => e)) as CommentError;
    expect(err).toBeInstanceOf(CommentError);
    expect(err).toMatchObject({ reason: 'unavailable', status: undefined });
    expect(err.message).toMatch(/^GitHub: listing the comments of #7 failed: .*ECONNREFUSED/);
  });

  it('GitLab: an answer that is not JSON is redacted before it is cut to 200 characters', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end(`<p>${'x'.repeat(180)} ${KEY}</p>`);
    });
    try {
      const err = (await upsertComment(gl({ apiUrl: `${server.url}/api/v4` }), `${MARKER}\nx`, { marker: MARKER }).catch((e: unknown) => e)) as CommentError;
      expect(err).toBeInstanceOf(CommentError);
      expect(err.message).not.toContain('comments-KEY');
    } finally {
      await server.close();
    }
  });

  it('a body over the limit is cut after redaction, never inside a [redacted]', () => {
    const body = `${MARKER}\n${'y'.repeat(GITHUB_BODY_LIMIT - 200)}${REDACTED}${'z'.repeat(300)}`;
    for (let limit = GITHUB_BODY_LIMIT - 150; limit <= GITHUB_BODY_LIMIT; limit++) {
      const cut = fitBody(body, MARKER, limit);
      expect(cut.length).toBeLessThanOrEqual(limit);
      expect(cut.replaceAll(REDACTED, '')).not.toMatch(/\[re|dacted\]/);
    }
  });
});

describe('GitLab (notes API)', () => {
  it('creates a note with PRIVATE-TOKEN; the project path is URL-encoded', async () => {
    const r = await upsertComment(gl(), `${MARKER}\nhello`, { marker: MARKER });
    expect(r.action).toBe('created');
    expect(calls()).toEqual([
      'GET /api/v4/projects/platform%2Fgov/merge_requests/12/notes',
      'POST /api/v4/projects/platform%2Fgov/merge_requests/12/notes',
    ]);
    for (const q of forge.requests) expect(q.auth).toBe('PRIVATE-TOKEN gl-test-token');
    expect(forge.requests[0]!.query).toMatchObject({ per_page: '100', page: '1', sort: 'asc' });
    expect(forge.requests[1]!.body).toEqual({ body: `${MARKER}\nhello` });
    expect(forge.requests[1]!.contentType).toBe('application/json');
  });

  it('updates its note in place (PUT), across pages, ignoring system notes', async () => {
    forge.add('platform/gov!12', `${MARKER}\nsystem note quoting the marker`, 'gitlab', { system: true });
    for (let i = 0; i < 120; i++) forge.add('platform/gov!12', `note ${i}`, 'alice');
    const mine = forge.add('platform/gov!12', `${MARKER}\nold`, 'github-actions[bot]');
    const r = await upsertComment(gl({ project: '42' }), `${MARKER}\nnew`, { marker: MARKER });
    expect(r.action).toBe('created'); // project 42 is another thread
    forge.requests.length = 0;
    const u = await upsertComment(gl(), `${MARKER}\nnew`, { marker: MARKER });
    expect(u).toMatchObject({ action: 'updated', id: String(mine.id) });
    expect(calls()).toEqual([
      'GET /api/v4/projects/platform%2Fgov/merge_requests/12/notes',
      'GET /api/v4/projects/platform%2Fgov/merge_requests/12/notes',
      'GET /api/v4/user', // whose marked notes are ours
      `PUT /api/v4/projects/platform%2Fgov/merge_requests/12/notes/${mine.id}`,
    ]);
    expect(forge.requests.map((q) => q.query.page)).toEqual(['1', '2', undefined, undefined]);
    expect(forge.requests[3]!.body).toEqual({ body: `${MARKER}\nnew` });
    expect(mine.body).toBe(`${MARKER}\nnew`);
  });

  it('an answer larger than the limit fails ("unavailable") without being read whole; nothing is posted', async () => {
    for (let i = 0; i < 30; i++) forge.add('platform/gov!12', `note ${i} ${'x'.repeat(1000)}`, 'alice');
    const err = await upsertComment(gl(), `${MARKER}\nx`, { marker: MARKER, maxAnswerBytes: 16 * 1024 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommentError);
    expect(err).toMatchObject({ reason: 'unavailable', message: expect.stringMatching(/listing the notes of !12: the answer is larger than 16384 bytes/) });
    expect(calls()).toEqual(['GET /api/v4/projects/platform%2Fgov/merge_requests/12/notes']);
    // under the limit, the same notes are read and a note is created
    expect((await upsertComment(gl(), `${MARKER}\nx`, { marker: MARKER })).action).toBe('created');
  });

  it('JOB-TOKEN when only the job token is given; a read-only token is "forbidden"', async () => {
    forge.readOnly = true;
    const err = await upsertComment(gl({ tokenHeader: 'JOB-TOKEN' }), `${MARKER}\nx`, { marker: MARKER }).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'forbidden', status: 403 });
    expect(forge.requests[0]!.auth).toBe('JOB-TOKEN gl-test-token');
    expect(calls()).toEqual([
      'GET /api/v4/projects/platform%2Fgov/merge_requests/12/notes',
      'POST /api/v4/projects/platform%2Fgov/merge_requests/12/notes',
    ]);
  });

  it("a marked note a merge-request author wrote first is not ours: ours is edited in place, theirs never (a Reporter's token)", async () => {
    const theirs = forge.add('platform/gov!12', `${MARKER}\nno changes, merge away`, 'mallory');
    for (let i = 0; i < 3; i++) await upsertComment(gl(), `${MARKER}\npush ${i}`, { marker: MARKER });
    const ours = forge.comments.filter((c) => c.author === BOT);
    expect(ours).toHaveLength(1);
    expect(ours[0]!.body).toBe(`${MARKER}\npush 2`);
    expect(theirs.body).toBe(`${MARKER}\nno changes, merge away`);
    expect(calls()).not.toContain(`PUT /api/v4/projects/platform%2Fgov/merge_requests/12/notes/${theirs.id}`);
  });

  it("a token that may edit others' notes (Maintainer) never writes the preview into the author's note", async () => {
    forge.editOthers = true;
    const theirs = forge.add('platform/gov!12', `${MARKER}\nplanted`, 'mallory');
    const r = await upsertComment(gl(), `${MARKER}\nthe real preview`, { marker: MARKER });
    expect(r.action).toBe('created');
    expect(theirs.body).toBe(`${MARKER}\nplanted`);
    expect(forge.comments.filter((c) => c.author === BOT).map((c) => c.body)).toEqual([`${MARKER}\nthe real preview`]);
  });

  it('an explicit author is used as given (no lookup of the token\'s user)', async () => {
    const mine = forge.add('platform/gov!12', `${MARKER}\nold`, 'project_7_bot');
    forge.editOthers = true;
    const r = await upsertComment(gl(), `${MARKER}\nnew`, { marker: MARKER, author: 'project_7_bot' });
    expect(r).toMatchObject({ action: 'updated', id: String(mine.id) });
    expect(calls()).not.toContain('GET /api/v4/user');
  });
});
