/**
 * The ready-made CI integrations: action.yml (composite GitHub Action) and ci/gitlab-preview.yml.
 * Their YAML is validated (structure, inputs, Node 24, no expression inside a script, shell syntax), and
 * their scripts are run here for real against a shallow clone of a repository with a pull-request commit,
 * the sandbox, and the local GitHub/GitLab stand-in: a same-repository pull request gets a live comment;
 * a fork gets an offline preview, the comment fails (read-only token) and the job summary holds it, without
 * failing the job; `fail-on` decides the step's result.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { expressions, PLAIN_REFERENCE, readAction, runAction, runBash, type ActionFile } from '../helpers/action-runner.js';
import { runGovops } from '../helpers/cli.js';
import { lakehouseManifest } from '../helpers/manifests.js';
import { startForge, type Forge } from '../helpers/forge.js';
import { git, initRepo } from '../helpers/git.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MARKER = '<!-- govops-preview -->';

function bashSyntax(script: string): string {
  const r = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' });
  return r.status === 0 ? '' : r.stderr;
}

const lake = (httpPath: string) => lakehouseManifest({ name: 'lake', host: 'lake.example.com', httpPath, tokenEnv: 'GOVOPS_SECRET_LAKE_TOKEN' });

/** A repository with the base commit on main and one pull-request commit on `branch` (the lakehouse's httpPath changed). */
async function seedRepo(dir: string, branch: string, prPath: string): Promise<void> {
  await mkdir(path.join(dir, 'm'), { recursive: true });
  initRepo(dir);
  await writeFile(path.join(dir, 'm', 'lake.yaml'), lake('/sql/1'));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  git(dir, 'checkout', '-q', '-b', branch);
  await writeFile(path.join(dir, 'm', 'lake.yaml'), lake(prPath));
  git(dir, 'commit', '-q', '-am', 'pull request');
  git(dir, 'checkout', '-q', 'main');
}

describe('action.yml', () => {
  let action: ActionFile;
  let text: string;
  beforeAll(async () => {
    text = await readFile(path.join(ROOT, 'action.yml'), 'utf8');
    action = await readAction(path.join(ROOT, 'action.yml'));
  });

  it('is a composite action with the inputs paths, base, url, token, fail-on (each described), and outputs', () => {
    expect(action.name).toBeTruthy();
    expect(action.description).toBeTruthy();
    expect(action.runs.using).toBe('composite');
    for (const name of ['paths', 'base', 'url', 'token', 'fail-on']) {
      expect(action.inputs[name], name).toBeDefined();
      expect(action.inputs[name]!.description.length, name).toBeGreaterThan(10);
    }
    expect(action.inputs['fail-on']!.default).toBe('error');
    expect(Object.keys(action.outputs).sort()).toEqual(['changed', 'exit-code', 'json']);
  });

  it("docs/pull-requests.md's input table names every input of action.yml, with its default", async () => {
    const doc = await readFile(path.join(ROOT, 'docs', 'pull-requests.md'), 'utf8');
    const table = /\| Input \| Default \| \|\n\|[-|]+\|\n((?:\|.*\|\n)+)/.exec(doc)![1]!;
    const rows = table.trimEnd().split('\n').map((l) => l.split('|').map((c) => c.trim()));
    expect(rows.map((r) => r[1]!.replace(/`/g, '')).sort()).toEqual(Object.keys(action.inputs).sort());
    for (const r of rows) {
      const name = r[1]!.replace(/`/g, '');
      const def = action.inputs[name]!.default ?? '';
      if (def !== '' && !def.includes('${{')) expect(r[2], name).toContain(`\`${def}\``);
    }
  });

  it('sets up Node 24, installs govops with npm ci in the action folder, runs the preview, then the comment', () => {
    const steps = action.runs.steps;
    const node = steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
    expect(node?.with?.['node-version']).toBe('24');
    // --include=dev: `prepare` builds with TypeScript, whatever NODE_ENV the workflow sets (test/ci/install.test.ts)
    expect(steps.find((s) => s.id === 'install')?.run).toMatch(/cd "\$GITHUB_ACTION_PATH"\n(?:\s*#.*\n)*\s*npm ci --include=dev /);
    expect(steps.map((s) => s.id ?? s.uses ?? s.name)).toEqual([expect.stringMatching(/^actions\/setup-node@v\d+$/), 'install', 'preview', 'comment', 'Result']);
  });

  it('passes action-validator (the real tool), and so does the workflow in docs/pull-requests.md', async () => {
    const validator = path.join(ROOT, 'node_modules', '.bin', 'action-validator');
    const own = spawnSync(validator, [path.join(ROOT, 'action.yml')], { encoding: 'utf8' });
    expect(own.stdout + own.stderr).toBe('');
    expect(own.status).toBe(0);
    const doc = await readFile(path.join(ROOT, 'docs', 'pull-requests.md'), 'utf8');
    const workflow = /```yaml\n(name: govops preview\n[\s\S]*?)```/.exec(doc)?.[1];
    expect(workflow).toBeDefined();
    const dir = await mkdtemp(path.join(tmpdir(), 'govops-workflow-'));
    try {
      await writeFile(path.join(dir, 'preview.yml'), workflow!);
      const r = spawnSync(validator, [path.join(dir, 'preview.yml')], { encoding: 'utf8' });
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("the docs' workflow runs one preview per pull request: a newer push cancels the older run, whose comment would overwrite the newer", async () => {
    const doc = await readFile(path.join(ROOT, 'docs', 'pull-requests.md'), 'utf8');
    const workflow = parse(/```yaml\n(name: govops preview\n[\s\S]*?)```/.exec(doc)![1]!) as { concurrency?: { group?: string; 'cancel-in-progress'?: boolean } };
    expect(workflow.concurrency?.group).toMatch(/\$\{\{ github\.event\.pull_request\.number \}\}/);
    expect(workflow.concurrency?.['cancel-in-progress']).toBe(true);
  });

  it('uses majors of actions/checkout and actions/setup-node that run on Node 24 (v5 or newer), here and in the docs', async () => {
    const files = ['action.yml', 'README.md', 'docs/pull-requests.md', 'docs/deploy.md'];
    const uses: string[] = [];
    for (const f of files) {
      const t = await readFile(path.join(ROOT, f), 'utf8');
      for (const m of t.matchAll(/actions\/(checkout|setup-node)@v(\d+)/g)) {
        uses.push(m[0]);
        expect(Number(m[2]), `${f}: ${m[0]}`).toBeGreaterThanOrEqual(5);
      }
    }
    expect(uses).toContain('actions/setup-node@v6');
    expect(uses).toContain('actions/checkout@v6');
  });

  it('every run step uses bash; no expression inside a script (injection); only plain references, all declared', () => {
    const ids = new Set<string>();
    for (const step of action.runs.steps) {
      if (step.run !== undefined) {
        expect(step.shell, step.name).toBe('bash');
        expect(expressions(step.run), step.name).toEqual([]);
        expect(bashSyntax(step.run), step.name).toBe('');
        expect(step.run, step.name).toMatch(/^set -euo pipefail\n/);
      }
      for (const v of Object.values(step.env ?? {})) {
        for (const e of expressions(String(v))) {
          expect(e).toMatch(PLAIN_REFERENCE);
          if (e.startsWith('inputs.')) expect(action.inputs[e.slice('inputs.'.length)], e).toBeDefined();
          if (e.startsWith('steps.')) expect(ids.has(e.split('.')[1]!), e).toBe(true);
        }
      }
      if (step.id) ids.add(step.id);
    }
    for (const o of Object.values(action.outputs)) for (const e of expressions(o.value)) expect(ids.has(e.split('.')[1]!), e).toBe(true);
    // the only expressions are in env, with, inputs' defaults and outputs
    expect(expressions(text).every((e) => PLAIN_REFERENCE.test(e))).toBe(true);
  });

  describe('run here against the sandbox and the GitHub stand-in', () => {
    let sandbox: SandboxHandle;
    let forge: Forge;
    let work: string;
    let origin: string;
    let tmp: string;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, transitionMs: 20 });
      forge = await startForge();
      tmp = await mkdtemp(path.join(tmpdir(), 'govops-action-'));
      // origin with a base commit on main; the pull request is a commit on a branch
      const seed = path.join(tmp, 'seed');
      origin = path.join(tmp, 'origin.git');
      await seedRepo(seed, 'pr', '/sql/2');
      const applied = await runGovops(['apply', 'm', '--state', path.join(tmp, 'state.json')], {
        cwd: seed,
        env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_LAKE_TOKEN: 'lake-SECRET-7777' },
      });
      expect(applied.code, applied.stderr).toBe(0);
      git(tmp, 'clone', '-q', '--bare', seed, origin);
      // actions/checkout: a shallow clone of the pull request's head
      work = path.join(tmp, 'work');
      git(tmp, 'clone', '-q', '--depth=1', '--branch', 'pr', `file://${origin}`, work);
      await writeFile(path.join(tmp, 'event.json'), JSON.stringify({ pull_request: { number: 3 } }));
    });
    afterAll(async () => {
      await sandbox.close();
      await forge.close();
      await rm(tmp, { recursive: true, force: true });
    });
    beforeEach(async () => {
      sandbox.clearRequests();
      forge.requests.length = 0;
      forge.readOnly = false;
      await writeFile(path.join(tmp, 'summary.md'), '');
    });

    const run = (headRepo: string, inputs: Record<string, string>, extraEnv: Record<string, string> = {}) =>
      runAction(action, {
        inputs: { paths: 'm', url: sandbox.url, token: sandbox.adminToken, ...inputs },
        github: { token: 'gh-test-token', base_ref: 'main', repository: 'acme/gov', event: { pull_request: { number: 3, head: { repo: { full_name: headRepo } } } } },
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          GITHUB_ACTIONS: 'true',
          GITHUB_ACTION_PATH: ROOT,
          GITHUB_REPOSITORY: 'acme/gov',
          GITHUB_EVENT_PATH: path.join(tmp, 'event.json'),
          GITHUB_API_URL: forge.url,
          GITHUB_STEP_SUMMARY: path.join(tmp, 'summary.md'),
          RUNNER_TEMP: tmp,
          ...extraEnv,
        },
        cwd: work,
        skip: ['install'],
      });

    it('a pull request of the repository: fetches the base, previews live, creates the comment; outputs set', async () => {
      const r = await run('acme/gov', {});
      expect(r.ok, JSON.stringify(r.steps, null, 2)).toBe(true);
      expect(r.outputs).toMatchObject({ 'exit-code': '2', changed: 'true', json: path.join(tmp, 'govops-preview.json') });
      expect(sandbox.requests().map((q) => `${q.method} ${q.path}`).sort()).toEqual(['GET /integrations', 'GET /webhooks']);
      const posted = forge.requests.find((q) => q.method === 'POST');
      expect(posted?.path).toBe('/repos/acme/gov/issues/3/comments');
      expect(posted?.auth).toBe('token gh-test-token');
      const body = (posted!.body as { body: string }).body;
      expect(body.startsWith(`${MARKER}\n`)).toBe(true);
      expect(body).toContain('| **This pull request** | 1 changed |');
      expect(body).toContain('**Compared with** the live service');
      expect(await readFile(path.join(tmp, 'summary.md'), 'utf8')).toBe(body.trimEnd() + '\n');
      // the token never shows in any step's output
      for (const s of r.steps) expect((s.stdout + s.stderr).replace(/^::add-mask::.*$/gm, '')).not.toContain(sandbox.adminToken);
      expect(r.steps.find((s) => s.id === 'preview')!.stdout).toContain(`::add-mask::${sandbox.adminToken}`);
    });

    it('a second run updates the same comment', async () => {
      const r = await run('acme/gov', {});
      expect(r.ok).toBe(true);
      expect(forge.requests.map((q) => q.method)).toEqual(['GET', 'PATCH']);
      expect(forge.comments.filter((c) => c.thread === 'acme/gov#3')).toHaveLength(1);
    });

    it('one preview per environment (docs/environments.md): each `comment-id` keeps its own comment, neither overwrites the other', async () => {
      // the unnamed preview's comment (an earlier run's, or this one's)
      expect((await run('acme/gov', {})).ok).toBe(true);
      const before = forge.comments.filter((c) => c.thread === 'acme/gov#3').length;
      for (let i = 0; i < 2; i++) {
        for (const id of ['dev', 'prod']) {
          const r = await run('acme/gov', { 'comment-id': id });
          expect(r.ok, JSON.stringify(r.steps, null, 2)).toBe(true);
        }
      }
      const mine = forge.comments.filter((c) => c.thread === 'acme/gov#3').slice(before);
      expect(mine.map((c) => c.body.split('\n').slice(0, 2).join('\n'))).toEqual([
        '<!-- govops-preview: dev -->\n### govops preview: dev',
        '<!-- govops-preview: prod -->\n### govops preview: prod',
      ]);
      // a name that is not one is refused before anything is written
      const bad = await run('acme/gov', { 'comment-id': '../x' });
      expect(bad.ok).toBe(false);
      expect(bad.steps.find((s) => s.id === 'preview')!.stdout).toContain('comment-id must be letters, digits');
      // the unnamed preview's comment is still the one it was: neither environment took it over
      expect(forge.comments.filter((c) => c.thread === 'acme/gov#3' && c.body.startsWith(`${MARKER}\n`))).toHaveLength(1);
    });

    it('a fork: offline (nothing sent to the service), the comment cannot be written, the job summary has it, the job passes', async () => {
      forge.readOnly = true;
      const r = await run('someone/gov', {});
      expect(r.ok, JSON.stringify(r.steps, null, 2)).toBe(true);
      expect(sandbox.requests()).toEqual([]);
      expect(r.outputs).toMatchObject({ 'exit-code': '2', changed: 'true' });
      const summary = await readFile(path.join(tmp, 'summary.md'), 'utf8');
      expect(summary.startsWith(MARKER)).toBe(true);
      expect(summary).toContain('> **Live state was not consulted:** pull request from the fork someone/gov: the service is not consulted and no secret is used.');
      expect(summary).toContain('~ spec.config.httpPath: "/sql/1" -> "/sql/2"');
      const comment = r.steps.find((s) => s.id === 'comment')!;
      expect(comment.stdout).toMatch(/::warning title=govops preview::comment not written: GitHub: .*403/);
    });

    it('a pull request whose head repository is not named (a deleted fork; an issue_comment event): offline, no secret used', async () => {
      const base = { paths: 'm', url: sandbox.url, token: sandbox.adminToken };
      const env = (eventName: string) => ({
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        GITHUB_ACTIONS: 'true',
        GITHUB_ACTION_PATH: ROOT,
        GITHUB_REPOSITORY: 'acme/gov',
        GITHUB_EVENT_NAME: eventName,
        GITHUB_EVENT_PATH: path.join(tmp, 'event.json'),
        GITHUB_API_URL: forge.url,
        GITHUB_STEP_SUMMARY: path.join(tmp, 'summary.md'),
        RUNNER_TEMP: tmp,
      });
      const contexts = [
        { name: 'pull_request', github: { token: 'gh-test-token', base_ref: 'main', repository: 'acme/gov', event: { pull_request: { number: 3, head: { repo: null } } } } },
        { name: 'issue_comment', github: { token: 'gh-test-token', base_ref: '', repository: 'acme/gov', event: { issue: { number: 3, pull_request: {} } } } },
      ];
      for (const c of contexts) {
        sandbox.clearRequests();
        await writeFile(path.join(tmp, 'summary.md'), '');
        const r = await runAction(action, { inputs: base, github: c.github, env: env(c.name), cwd: work, skip: ['install'] });
        expect(r.ok, JSON.stringify(r.steps, null, 2)).toBe(true);
        expect(sandbox.requests(), c.name).toEqual([]);
        expect(await readFile(path.join(tmp, 'summary.md'), 'utf8')).toContain('> **Live state was not consulted:** pull request whose head repository is not named');
      }
    });

    it('fail-on: changes fails the step on exit 2; never passes; a bad value is an error', async () => {
      const changes = await run('acme/gov', { 'fail-on': 'changes' });
      expect(changes.ok).toBe(false);
      expect(changes.steps.at(-1)!.stdout).toContain('::error title=govops preview::the pull request changes the service (fail-on: changes)');
      expect((await run('acme/gov', { 'fail-on': 'never' })).ok).toBe(true);
      const bad = await run('acme/gov', { 'fail-on': 'sometimes' });
      expect(bad.ok).toBe(false);
      expect(bad.steps.at(-1)!.stdout).toContain('fail-on must be error, changes or never');
    });

    it('output changed is true when merging changes something, also when the preview exits 1 (a failed dry run)', async () => {
      // the lakehouse update is dry-run (its secret is given) and its validation fails: exit 1, and merging still
      // updates it; docs/pull-requests.md: `changed` (`true` when merging changes something)
      sandbox.failures.tests = [{ name: '*', status: 'failed' }];
      try {
        const r = await run('acme/gov', { 'fail-on': 'never' }, { GOVOPS_SECRET_LAKE_TOKEN: 'lake-SECRET-7777' });
        expect(r.ok, JSON.stringify(r.steps, null, 2)).toBe(true);
        const preview = JSON.parse(await readFile(path.join(tmp, 'govops-preview.json'), 'utf8')) as { exitCode: number; changed: boolean };
        expect(preview).toMatchObject({ exitCode: 1, changed: true });
        expect(r.outputs).toMatchObject({ 'exit-code': '1', changed: 'true' });
      } finally {
        sandbox.failures.clear();
      }
    });
  });
});

interface GitlabJob {
  stage: string;
  interruptible?: boolean;
  image: string;
  rules: Array<{ if: string }>;
  variables: Record<string, string>;
  artifacts: { when: string; paths: string[] };
  script: string[];
}

describe('ci/gitlab-preview.yml', () => {
  let doc: { variables: Record<string, string>; 'govops-preview': GitlabJob };
  beforeAll(async () => {
    doc = parse(await readFile(path.join(ROOT, 'ci', 'gitlab-preview.yml'), 'utf8')) as typeof doc;
  });

  it('a merge-request job on Node 24 with the full history, the preview kept as an artifact; valid bash', () => {
    const job = doc['govops-preview'];
    // a newer pipeline of the merge request cancels this job (auto-cancel redundant pipelines): an older push's
    // preview, finishing last, would overwrite the newer one's note
    expect(job.interruptible).toBe(true);
    expect(job.image).toBe('node:24');
    expect(job.rules).toEqual([{ if: '$CI_PIPELINE_SOURCE == "merge_request_event"' }]);
    expect(job.variables.GIT_DEPTH).toBe('0');
    expect(job.artifacts).toMatchObject({ when: 'always', paths: ['govops-preview.md', 'govops-preview.json'] });
    expect(Object.keys(doc.variables).sort()).toEqual(['GOVOPS_BASE', 'GOVOPS_CLI', 'GOVOPS_COMMENT_ID', 'GOVOPS_EXTRA_ARGS', 'GOVOPS_FAIL_ON', 'GOVOPS_PACKAGE', 'GOVOPS_PATHS']);
    expect(bashSyntax(job.script.join('\n'))).toBe('');
  });

  describe('run here against the sandbox and the GitLab stand-in', () => {
    let sandbox: SandboxHandle;
    let forge: Forge;
    let tmp: string;
    let work: string;
    beforeAll(async () => {
      sandbox = await startSandbox({ port: 0, transitionMs: 20 });
      forge = await startForge();
      tmp = await mkdtemp(path.join(tmpdir(), 'govops-gitlab-'));
      const seed = path.join(tmp, 'seed');
      await seedRepo(seed, 'feature', '/sql/9');
      work = path.join(tmp, 'work');
      git(tmp, 'clone', '-q', '--branch', 'feature', `file://${seed}`, work);
    });
    afterAll(async () => {
      await sandbox.close();
      await forge.close();
      await rm(tmp, { recursive: true, force: true });
    });

    const job = (extra: Record<string, string>) => {
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...doc.variables,
        ...doc['govops-preview'].variables,
        GOVOPS_CLI: `node ${path.join(ROOT, 'dist', 'cli', 'main.js')}`,
        GOVOPS_PATHS: 'm',
        GITLAB_CI: 'true',
        CI_PROJECT_DIR: work,
        CI_API_V4_URL: `${forge.url}/api/v4`,
        CI_PROJECT_ID: '77',
        CI_MERGE_REQUEST_PROJECT_ID: '77',
        CI_MERGE_REQUEST_SOURCE_PROJECT_ID: '77',
        CI_MERGE_REQUEST_IID: '5',
        CI_MERGE_REQUEST_TARGET_BRANCH_NAME: 'main',
        GOVOPS_GITLAB_TOKEN: 'gl-test-token',
        GOVOPS_URL: sandbox.url,
        GOVOPS_TOKEN: sandbox.adminToken,
        ...extra,
      };
      // asynchronously: the GitLab stand-in answers from this process
      return runBash(doc['govops-preview'].script.join('\n'), env, work);
    };

    it('a merge request: a live preview posted as a note (PRIVATE-TOKEN), edited in place on the next run', async () => {
      for (let i = 0; i < 2; i++) {
        const r = await job({});
        expect(r.code, r.stderr + r.stdout).toBe(0);
      }
      expect(forge.requests.map((q) => `${q.method} ${q.path}`)).toEqual([
        'GET /api/v4/projects/77/merge_requests/5/notes',
        'POST /api/v4/projects/77/merge_requests/5/notes',
        'GET /api/v4/projects/77/merge_requests/5/notes',
        'GET /api/v4/user', // whose marked notes are ours
        `PUT /api/v4/projects/77/merge_requests/5/notes/${forge.comments[0]!.id}`,
      ]);
      expect(forge.requests.every((q) => q.auth === 'PRIVATE-TOKEN gl-test-token')).toBe(true);
      expect(forge.comments[0]!.body).toContain('**Compared with** the live service');
      expect(forge.comments[0]!.body).toContain('~ spec.config.httpPath: "/sql/1" -> "/sql/9"');
      expect(JSON.parse(await readFile(path.join(work, 'govops-preview.json'), 'utf8'))).toMatchObject({ formatVersion: 2, exitCode: 2 });
    });

    it('one job per environment (GOVOPS_COMMENT_ID): each keeps its own note, neither overwrites the other', async () => {
      expect((await job({})).code).toBe(0);
      const before = forge.comments.length;
      for (let i = 0; i < 2; i++) {
        for (const id of ['dev', 'prod']) {
          const r = await job({ GOVOPS_COMMENT_ID: id });
          expect(r.code, r.stderr + r.stdout).toBe(0);
        }
      }
      expect(forge.comments.slice(before).map((c) => c.body.split('\n').slice(0, 2).join('\n'))).toEqual([
        '<!-- govops-preview: dev -->\n### govops preview: dev',
        '<!-- govops-preview: prod -->\n### govops preview: prod',
      ]);
      expect(forge.comments.filter((c) => c.body.startsWith(`${MARKER}\n`))).toHaveLength(1);
    });

    it('a fork: offline, the note cannot be written, the artifact holds the preview, the job passes; fail-on changes fails it', async () => {
      forge.readOnly = true;
      sandbox.clearRequests();
      const fork = { CI_MERGE_REQUEST_SOURCE_PROJECT_ID: '99', CI_MERGE_REQUEST_SOURCE_PROJECT_PATH: 'someone/gov' };
      const r = await job(fork);
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(sandbox.requests()).toEqual([]);
      expect(r.stderr).toMatch(/warning: the comment was not written: GitLab: .*403/);
      const md = await readFile(path.join(work, 'govops-preview.md'), 'utf8');
      expect(md).toContain('merge request from the fork someone/gov');
      const strict = await job({ ...fork, GOVOPS_FAIL_ON: 'changes' });
      expect(strict.code).toBe(1);
      expect(strict.stderr).toContain('the merge request changes the service (GOVOPS_FAIL_ON=changes)');
    });

    it('GOVOPS_PACKAGE is installed outside the checkout: an .npmrc the merge request adds there is never read', async () => {
      // a stand-in govops package (an install script, so npm runs a shell) and a merge request that adds
      // .govops-cli/.npmrc, where the template installed, naming its own script shell
      const pkg = path.join(tmp, 'fake-govops');
      await mkdir(path.join(pkg, 'dist', 'cli'), { recursive: true });
      await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: 'govops', version: '0.0.0', scripts: { postinstall: 'node -e 0' } }));
      await writeFile(
        path.join(pkg, 'dist', 'cli', 'main.js'),
        "const a = process.argv.slice(2); if (a[0] === 'preview') require('fs').writeFileSync(a[a.indexOf('--out') + 1], JSON.stringify({ formatVersion: 2, exitCode: 0, markdown: 'x' }));\n",
      );
      const packed = spawnSync('npm', ['pack', '--silent', '--pack-destination', tmp], { cwd: pkg, encoding: 'utf8' });
      expect(packed.status, packed.stderr).toBe(0);
      const pwned = path.join(tmp, 'pwned');
      const shell = path.join(tmp, 'evil.sh');
      await writeFile(shell, `#!/bin/sh\necho "$GOVOPS_TOKEN" > ${pwned}\n`, { mode: 0o755 });
      await mkdir(path.join(work, '.govops-cli'), { recursive: true });
      await writeFile(path.join(work, '.govops-cli', '.npmrc'), `script-shell=${shell}\n`);
      try {
        const r = await job({ GOVOPS_CLI: '', GOVOPS_PACKAGE: path.join(tmp, packed.stdout.trim()), npm_config_cache: path.join(tmp, 'npm-cache') });
        expect(r.code, r.stderr + r.stdout).toBe(0);
        await expect(readFile(pwned, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
      } finally {
        await rm(path.join(work, '.govops-cli'), { recursive: true, force: true });
      }
    });
  });
});

describe('Node 24 in every example', () => {
  it('action.yml, the GitLab template and the docs name no other Node version', async () => {
    for (const file of ['action.yml', 'ci/gitlab-preview.yml', 'docs/pull-requests.md', 'docs/preview.md']) {
      const text = await readFile(path.join(ROOT, file), 'utf8').catch(() => '');
      for (const m of text.matchAll(/node-version:\s*["']?(\d+)|image:\s*["']?node:(\d+)/g)) expect(m[1] ?? m[2], file).toBe('24');
    }
  });
});
