/**
 * `govops comment` as CI runs it: the target from the job's environment (GitHub Actions event file,
 * GitLab CI variables), the body from the preview's Markdown or its JSON, and the fork rule: a comment
 * that cannot be written goes to the job summary and does not fail the job.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runGovops } from '../helpers/cli.js';
import { startForge, type Forge } from '../helpers/forge.js';
import { startServer } from '../api/server.js';

const MARKER = '<!-- govops-preview -->';
let forge: Forge;
let dir: string;

beforeAll(async () => {
  forge = await startForge();
  dir = await mkdtemp(path.join(tmpdir(), 'govops-comment-'));
  await writeFile(path.join(dir, 'event.json'), JSON.stringify({ pull_request: { number: 5, head: { repo: { fork: false } } } }));
  await writeFile(path.join(dir, 'preview.md'), `${MARKER}\n### govops preview\nbody one\n`);
  await writeFile(path.join(dir, 'preview.json'), JSON.stringify({ formatVersion: 2, markdown: `${MARKER}\n### govops preview\nfrom json\n` }));
});
afterAll(async () => {
  await forge.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  forge.requests.length = 0;
  forge.comments.length = 0;
  forge.readOnly = false;
  delete forge.readOnlyMessage;
});

/** Only the variables a job sets; nothing inherited that could point elsewhere. */
const CLEAN = {
  GITHUB_ACTIONS: undefined, GITHUB_TOKEN: undefined, GOVOPS_GITHUB_TOKEN: undefined, GITHUB_REPOSITORY: undefined,
  GITHUB_EVENT_PATH: undefined, GITHUB_API_URL: undefined, GITHUB_STEP_SUMMARY: undefined, GITLAB_CI: undefined,
  CI_API_V4_URL: undefined, CI_PROJECT_ID: undefined, CI_MERGE_REQUEST_IID: undefined, CI_MERGE_REQUEST_PROJECT_ID: undefined,
  CI_JOB_TOKEN: undefined, GOVOPS_GITLAB_TOKEN: undefined,
};
const github = () => ({
  ...CLEAN,
  GITHUB_ACTIONS: 'true',
  GITHUB_TOKEN: 'gh-test-token',
  GITHUB_REPOSITORY: 'acme/gov',
  GITHUB_EVENT_PATH: path.join(dir, 'event.json'),
  GITHUB_API_URL: forge.url,
});
const gitlab = () => ({
  ...CLEAN,
  GITLAB_CI: 'true',
  CI_API_V4_URL: `${forge.url}/api/v4`,
  CI_PROJECT_ID: '77',
  CI_MERGE_REQUEST_IID: '3',
  GOVOPS_GITLAB_TOKEN: 'gl-test-token',
  CI_JOB_TOKEN: 'job-token-not-used',
});

describe('govops comment', () => {
  it('GitHub Actions: the PR number from the event file; creates, then updates the same comment', async () => {
    const first = await runGovops(['comment', 'preview.md', '--author', 'github-actions[bot]'], { cwd: dir, env: github() });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/^created comment \d+/m);
    const second = await runGovops(['comment', 'preview.json', '--author', 'github-actions[bot]'], { cwd: dir, env: github() });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/^updated comment \d+/m);
    expect(forge.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      'GET /repos/acme/gov/issues/5/comments',
      'POST /repos/acme/gov/issues/5/comments',
      'GET /repos/acme/gov/issues/5/comments',
      `PATCH /repos/acme/gov/issues/comments/${forge.comments[0]!.id}`,
    ]);
    expect(forge.requests.every((q) => q.auth === 'token gh-test-token')).toBe(true);
    expect(forge.comments).toHaveLength(1);
    // the JSON's markdown was posted, not the JSON
    expect(forge.comments[0]!.body).toBe(`${MARKER}\n### govops preview\nfrom json\n`);
  });

  it('a fork (read-only token): a warning and the job summary, exit 0; without a job summary, exit 1', async () => {
    forge.readOnly = true;
    const summary = path.join(dir, 'summary.md');
    await writeFile(summary, '');
    const r = await runGovops(['comment', 'preview.md', '--job-summary', summary], { cwd: dir, env: github() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: the comment was not written: GitHub: .*403.*fork/);
    expect(r.stdout).toMatch(/^::warning title=govops preview::comment not written/m);
    expect(await readFile(summary, 'utf8')).toBe(`${MARKER}\n### govops preview\nbody one\n`);
    expect(r.stderr + r.stdout).not.toContain('gh-test-token');
    const strict = await runGovops(['comment', 'preview.md'], { cwd: dir, env: github() });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/403/);
  });

  it("the platform's error message reaches the terminal escaped (issue 27: control characters from the service)", async () => {
    forge.readOnly = true;
    forge.readOnlyMessage = 'denied \u001b[2J\u001b]0;pwned\u0007 \u202eevil \u009b31m';
    const summary = path.join(dir, 'summary.md');
    await writeFile(summary, '');
    for (const env of [github(), gitlab()]) {
      const r = await runGovops(['comment', 'preview.md', '--job-summary', summary], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/warning: the comment was not written: .*denied \\(x1b|u001b)\[2J/);
      // eslint-disable-next-line no-control-regex
      expect(r.stderr + r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      const strict = await runGovops(['comment', 'preview.md'], { cwd: dir, env });
      expect(strict.code).toBe(1);
      // eslint-disable-next-line no-control-regex
      expect(strict.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    }
  });

  it('--id: its own marker and heading; a name that could end the HTML comment is refused (exit 1, even with --job-summary), nothing posted', async () => {
    const ok = await runGovops(['comment', 'preview.json', '--id', 'prod-eu.1', '--number', '11'], { cwd: dir, env: github() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(forge.comments.at(-1)!.body).toBe('<!-- govops-preview: prod-eu.1 -->\n### govops preview: prod-eu.1\nfrom json\n');
    const posted = forge.requests.length;
    for (const bad of ['x -->', 'a b', '', '-x', 'x'.repeat(65)]) {
      const r = await runGovops(['comment', 'preview.json', '--id', bad, '--number', '11', '--job-summary', path.join(dir, 'summary.md')], { cwd: dir, env: github() });
      expect(r.code, bad).toBe(1);
      expect(r.stderr).toMatch(/--id must be letters, digits/);
    }
    expect(forge.requests.length).toBe(posted);
  });

  it("--id on a plan's Markdown (one comment per rendered environment, docs/environments.md): its heading names the environment too", async () => {
    await writeFile(path.join(dir, 'prod.md'), '### govops plan\n\n**Plan: 1 to create**\n');
    const ok = await runGovops(['comment', 'prod.md', '--id', 'prod', '--number', '11'], { cwd: dir, env: github() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(forge.comments.at(-1)!.body).toBe('<!-- govops-preview: prod -->\n### govops plan: prod\n\n**Plan: 1 to create**\n');
  });

  it('missing settings are explained (no PR number, no token)', async () => {
    const noEvent = await runGovops(['comment', 'preview.md'], { cwd: dir, env: { ...github(), GITHUB_EVENT_PATH: undefined } });
    expect(noEvent.code).toBe(1);
    expect(noEvent.stderr).toMatch(/no pull-request number: run on a pull_request event, or pass --number/);
    const withNumber = await runGovops(['comment', 'preview.md', '--number', '9'], { cwd: dir, env: { ...github(), GITHUB_EVENT_PATH: undefined } });
    expect(withNumber.code, withNumber.stderr).toBe(0);
    expect(forge.requests.at(-1)!.path).toBe('/repos/acme/gov/issues/9/comments');
    const noToken = await runGovops(['comment', 'preview.md'], { cwd: dir, env: { ...github(), GITHUB_TOKEN: undefined } });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/no GitHub token/);
    const nowhere = await runGovops(['comment', 'preview.md'], { cwd: dir, env: CLEAN });
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/--platform github or --platform gitlab/);
  });

  it('GitLab CI: a merge-request note with GOVOPS_GITLAB_TOKEN as PRIVATE-TOKEN, updated in place', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await runGovops(['comment', 'preview.md'], { cwd: dir, env: gitlab() });
      expect(r.code, r.stderr).toBe(0);
    }
    expect(forge.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
      'GET /api/v4/projects/77/merge_requests/3/notes',
      'POST /api/v4/projects/77/merge_requests/3/notes',
      'GET /api/v4/projects/77/merge_requests/3/notes',
      'GET /api/v4/user', // whose marked notes are ours
      `PUT /api/v4/projects/77/merge_requests/3/notes/${forge.comments[0]!.id}`,
    ]);
    expect(forge.requests.every((q) => q.auth === 'PRIVATE-TOKEN gl-test-token')).toBe(true);
    expect(forge.comments).toHaveLength(1);
  });

  it('an answer cut short (the connection reset mid-answer) is a warning with --job-summary, on GitHub and GitLab', async () => {
    const server = await startServer((_req, res, { socket }) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.write('[{"id": 1, "body": "');
      setImmediate(() => socket.destroy());
    });
    try {
      const summary = path.join(dir, 'summary.md');
      for (const env of [{ ...github(), GITHUB_API_URL: server.url }, { ...gitlab(), CI_API_V4_URL: `${server.url}/api/v4` }]) {
        await writeFile(summary, '');
        const r = await runGovops(['comment', 'preview.md', '--job-summary', summary], { cwd: dir, env });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/warning: the comment was not written: Git(Hub|Lab): listing the (comments|notes) of [#!]\d+ failed: /);
        // nothing was posted on the strength of a listing that looked empty
        expect(server.seen.filter((q) => q.method !== 'GET')).toEqual([]);
        expect(await readFile(summary, 'utf8')).toContain('body one');
      }
    } finally {
      await server.close();
    }
  });
});
