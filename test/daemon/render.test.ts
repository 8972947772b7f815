/**
 * `govops run --render CMD`: each revision's manifests are the output of an operator-configured command run in
 * the revision's manifest folder, with the Git adapter's environment rules (nothing of govops' environment reaches
 * it). A render that fails or hangs rejects the revision like an invalid manifest; the last good one stays.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { basename, dirname, join } from 'node:path';
import { mkdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { linksLeaving } from '../../src/sources/links-out.js';
import { ServiceClient } from '../../src/api/client.js';
import { githubSignature } from '../../src/daemon/hooks.js';
import { parseRenderCommand, RenderError, renderToolProblem, runRender } from '../../src/sources/render.js';
import { registerSecrets } from '../../src/util/redact.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, getJson, spawnRun, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** A render script: fails if any govops variable reached it, else prints webhook manifests built from its argument. */
const renderScript = (body: string): string => `
const leaked = Object.keys(process.env).filter((k) => k.startsWith('GOVOPS'));
if (leaked.length) { console.error('leaked: ' + leaked.join(',')); process.exit(3); }
${body}
`;
const printHooks = (names: string[]): string =>
  `process.stdout.write(${JSON.stringify(names.map((n) => `apiVersion: govops/v1\nkind: Webhook\nmetadata: { name: ${n} }\nspec: { url: "https://hooks.example.com/${n}", global: false, notificationType: [userCreated], actionType: triggered }\n`).join('---\n'))});`;

describe('parseRenderCommand', () => {
  it('splits words, honours quotes and escapes, expands nothing', () => {
    expect(parseRenderCommand(`kustomize build  overlays/prod`)).toEqual(['kustomize', 'build', 'overlays/prod']);
    expect(parseRenderCommand(`sh -c 'echo $HOME; x' "a \\"b\\"" c\\ d`)).toEqual(['sh', '-c', 'echo $HOME; x', 'a "b"', 'c d']);
    expect(() => parseRenderCommand(`a 'b`)).toThrow(/unclosed/);
    expect(() => parseRenderCommand('   ')).toThrow(/empty/);
  });
});

describe('runRender', () => {
  it("a failure's stderr is redacted before its last 8 KiB are kept: no part of a secret across the cut", async () => {
    const secret = 'render-Secret-TAILPART1';
    registerSecrets(secret);
    // written as parts, so the command line shown in the error does not hold the value itself
    const script = `process.stderr.write(['render', 'Secret', 'TAILPART1'].join('-') + 'y'.repeat(8183)); process.exit(1);`;
    const err = await runRender({ argv: [process.execPath, '-e', script], timeoutMs: 30_000 }, process.cwd()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    // what the command wrote: only y, neither the value's tail nor a piece of its [redacted]
    expect((err as RenderError).message).toMatch(/failed \(exit code 1\): y+$/);
  });

  it("the command's environment: the allow-list only (no token, state URL, database or cloud credential), PATH absolute, run in the folder given", async () => {
    const dir = await cleanup.tmp('govops-render-env-');
    const env = {
      PATH: `.:bin::${process.env.PATH ?? '/usr/bin'}`,
      HOME: '/home/govops',
      GOVOPS_TOKEN: 'svc-token',
      GOVOPS_GIT_TOKEN: 'git-token',
      GOVOPS_STATE_URL: 'postgres://u:pw@db/govops',
      GOVOPS_SECRET_WAREHOUSE_PASSWORD: 'pw',
      DATABASE_URL: 'postgres://u:pw@db/x',
      PGPASSWORD: 'pw',
      AWS_SECRET_ACCESS_KEY: 'aws',
      GITHUB_TOKEN: 'gh',
      KUBECONFIG: '/home/govops/.kube/config',
      HTTPS_PROXY: 'http://proxy:3128',
    };
    const script = 'process.stdout.write(JSON.stringify({ env: process.env, cwd: process.cwd() }))';
    const out = JSON.parse(await runRender({ argv: [process.execPath, '-e', script], timeoutMs: 30_000 }, dir, { env })) as { env: Record<string, string>; cwd: string };
    expect(Object.keys(out.env).sort()).toEqual(['HOME', 'HTTPS_PROXY', 'LC_ALL', 'PATH']);
    expect(out.env.PATH!.split(':').every((p) => p.startsWith('/'))).toBe(true);
    expect(out.cwd).toBe(await realpath(dir));
  });

  it('output past 64 MiB stops the command (reason output); output that is not UTF-8 is refused; a signal is named', async () => {
    const flood = "const b = Buffer.alloc(1 << 20, 97); let n = 0; const w = () => { while (n < 80) { n++; if (!process.stdout.write(b)) return process.stdout.once('drain', w); } }; w();";
    const big = await runRender({ argv: [process.execPath, '-e', flood], timeoutMs: 30_000 }, process.cwd()).catch((e: unknown) => e);
    expect(big).toMatchObject({ name: 'RenderError', reason: 'output' });
    expect((big as RenderError).message).toMatch(/wrote more than 67108864 bytes$/);
    const latin1 = await runRender({ argv: [process.execPath, '-e', 'process.stdout.write(Buffer.from([0x6b, 0x3a, 0x20, 0xe9, 0x0a]))'], timeoutMs: 30_000 }, process.cwd()).catch((e: unknown) => e);
    expect(latin1).toMatchObject({ name: 'RenderError', reason: 'output' });
    expect((latin1 as RenderError).message).toMatch(/wrote output that is not UTF-8 text$/);
    const killed = await runRender({ argv: [process.execPath, '-e', "console.error('segv'); process.kill(process.pid, 'SIGSEGV')"], timeoutMs: 30_000 }, process.cwd()).catch((e: unknown) => e);
    expect(killed).toMatchObject({ name: 'RenderError', reason: 'exit' });
    expect((killed as RenderError).message).toMatch(/failed \(killed by SIGSEGV\): segv$/);
  });

  it('a process the command left behind in a group of its own, holding its output open: the timeout still ends the render', async () => {
    // docs/environments.md: the command "is killed (its whole process group) after --render-timeout". A descendant
    // that left the group (setsid, a detached spawn: an agent a tool starts) kept the output pipe open, the render
    // waited for it to close, and the reconcile (and a shutdown during it) waited as long as that process lived.
    const dir = await cleanup.tmp('govops-render-escape-');
    const pidFile = join(dir, 'pid');
    const escaped = `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: ['ignore', 'inherit', 'inherit'] }); require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)); c.unref(); setInterval(() => {}, 1000);`;
    cleanup.add(async () => {
      const pid = Number(await readFile(pidFile, 'utf8').catch(() => ''));
      if (pid > 0) process.kill(pid, 'SIGKILL');
    });
    const started = Date.now();
    const guard = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 20_000).unref());
    const err = await Promise.race([runRender({ argv: [process.execPath, '-e', escaped], timeoutMs: 2000 }, dir).catch((e: unknown) => e), guard]);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).reason).toBe('timeout');
    expect((err as RenderError).message).toMatch(/did not finish within 2000 ms: killed/);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);
});

describe('linksLeaving', () => {
  it('a stop asked for before the command starts: it is not started (it ran until its timeout, past the grace)', async () => {
    const stop = new AbortController();
    stop.abort();
    const started = Date.now();
    const err = await runRender({ argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'], timeoutMs: 20_000 }, process.cwd(), { signal: stop.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RenderError);
    expect((err as RenderError).reason).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('lists the links leading outside the folder (absolute, relative, dangling), not those inside, not in .git', async () => {
    const root = await cleanup.tmp('govops-links-');
    const outside = await cleanup.tmp('govops-links-out-');
    await writeFile(join(outside, 'secret.txt'), 'x');
    await mkdir(join(root, 'a', 'b'), { recursive: true });
    await mkdir(join(root, '.git'));
    await writeFile(join(root, 'a', 'in.yaml'), 'x: 1\n');
    await symlink(join(root, 'a', 'in.yaml'), join(root, 'inside-abs.yaml'));
    await symlink('../in.yaml', join(root, 'a', 'b', 'inside-rel.yaml'));
    expect(await linksLeaving(root)).toEqual([]);
    await symlink(join(outside, 'secret.txt'), join(root, 'a', 'abs.txt'));
    await symlink('../../../../../../../../etc/hostname', join(root, 'a', 'b', 'rel.txt'));
    await symlink(join(outside, 'gone.txt'), join(root, 'dangling.txt'));
    await symlink(outside, join(root, 'a', 'dir-link'));
    await symlink(join(outside, 'secret.txt'), join(root, '.git', 'ignored'));
    expect(await linksLeaving(root)).toEqual(['a/abs.txt', 'a/b/rel.txt', 'a/dir-link', 'dangling.txt']);
    expect(await linksLeaving(root, 2)).toHaveLength(2);
  });
});

describe('govops run --render (Git source, real process)', () => {
  it('applies the rendered output; a failing and a hanging render reject their revision; nothing of govops env leaks', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    cleanup.add(() => sandbox.close());
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    const home = await cleanup.tmp('govops-render-');
    const sha1 = await repo.commit({ 'env/render.mjs': renderScript(printHooks(['rendered-a', 'rendered-b'])), 'env/base.yaml': 'not: a manifest\n' });

    const d = spawnRun(
      cleanup,
      [
        '--repo', repo.bare, '--branch', 'main', '--path', 'env', '--interval', '10m', '--resync', '10m',
        '--render', `${process.execPath} render.mjs`, '--render-timeout', '2s',
        '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--grace', '5s',
      ],
      { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_CANARY: 'canary-value', GOVOPS_GIT_WEBHOOK_SECRET: 'push-secret' }, stopSignal: 'SIGKILL' },
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    const status = async () => (await getJson(`${url}/status`)).body;
    await until(async () => (await status()).revision.lastApplied === sha1, 20_000, 'rendered revision applied');
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['rendered-a', 'rendered-b']);

    const push = async (sha: string) => {
      const body = JSON.stringify({ ref: 'refs/heads/main', after: sha });
      const res = await fetch(`${url}/hooks/git`, { method: 'POST', body, headers: { 'x-hub-signature-256': githubSignature('push-secret', body), 'x-github-event': 'push' } });
      expect(res.status).toBe(202);
    };
    const rejected = async (sha: string) =>
      until(async () => {
        const s = await status();
        return s.revision.rejected === sha ? s : undefined;
      }, 20_000, `${sha} rejected`);

    // a render that fails: rejected, its stderr in the error; the last good revision stays
    const sha2 = await repo.commit({ 'env/render.mjs': renderScript(`${printHooks(['rendered-c'])} console.error('kustomize: boom'); process.exit(1);`) });
    await push(sha2);
    const failed = await rejected(sha2);
    expect(failed.lastError.message).toMatch(/render.*exit code 1.*kustomize: boom/s);
    expect(failed.revision.lastGood).toBe(sha1);

    // a render that hangs: killed after --render-timeout, rejected
    const sha3 = await repo.commit({ 'env/render.mjs': renderScript(`${printHooks(['rendered-d'])} setInterval(() => {}, 1000);`) });
    const t0 = Date.now();
    await push(sha3);
    const hung = await rejected(sha3);
    expect(hung.lastError.message).toMatch(/did not finish within 2000 ms/);
    expect(Date.now() - t0).toBeLessThan(15_000);

    // a render whose output is not valid: rejected naming the document of the stream
    const sha4 = await repo.commit({ 'env/render.mjs': renderScript(`process.stdout.write('apiVersion: govops/v1\\nkind: Webhook\\nmetadata: { name: x }\\nspec: { url: 1 }\\n');`) });
    await push(sha4);
    const invalid = await rejected(sha4);
    expect(invalid.lastError.message).toMatch(/render:doc 1:\d+:\d+/);
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['rendered-a', 'rendered-b']);

    // a commit with a link leading out of the checkout (to a file of the operator's): rejected before the render
    // runs, so the render cannot copy what it points to into the manifests
    await writeFile(join(home, 'operator-file.txt'), 'canary-file-value');
    await symlink(join(home, 'operator-file.txt'), join(repo.work, 'env', 'leak.txt'));
    const sha5 = await repo.commit({
      'env/render.mjs': renderScript(`const v = (await import('node:fs')).readFileSync('leak.txt', 'utf8'); ${printHooks(['leaked-x'])}; console.error(v);`),
    });
    await push(sha5);
    const linked = await rejected(sha5);
    expect(linked.lastError.message).toMatch(/a symbolic link leading outside the revision, refused before rendering .*: env\/leak\.txt;/);
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['rendered-a', 'rendered-b']);
    expect(d.out()).not.toContain('canary-file-value');
    expect(d.out()).not.toContain('canary-value');
    expect(d.out()).not.toContain('leaked');
  });
});

describe('govops run --render: the folder it runs in is inside the revision (real process)', () => {
  // docs/environments.md: the command runs "in the revision's manifest folder (--path of the Git source)". An --path
  // that leaves the checkout (absolute, or with ..) ran the command in a folder of the host and applied what it printed;
  // without --render the same --path is refused (the loader reads nothing outside the revision).
  it.each([
    { label: 'absolute', path: (outside: string) => outside },
    { label: 'with ..', path: (outside: string) => join('..', '..', '..', '..', '..', '..', '..', '..', outside) },
  ])('an --path $label that leads out of the checkout rejects the revision; the command never runs there', async ({ path }) => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    cleanup.add(() => sandbox.close());
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    const home = await cleanup.tmp('govops-render-out-');
    const outside = await cleanup.tmp('govops-render-host-');
    await writeFile(join(outside, 'render.mjs'), renderScript(printHooks(['from-the-host'])));
    const sha = await repo.commit({ 'env/render.mjs': renderScript(printHooks(['from-the-repo'])) });

    const d = spawnRun(
      cleanup,
      [
        '--repo', repo.bare, '--branch', 'main', '--path', path(outside), '--interval', '10m', '--resync', '10m',
        '--render', `${process.execPath} render.mjs`, '--render-timeout', '20s',
        '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--grace', '5s',
      ],
      { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken }, stopSignal: 'SIGKILL' },
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    const status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.revision.lastApplied !== undefined || s.revision.rejected !== undefined ? s : undefined;
    }, 20_000, 'first revision done');
    expect(status.revision.rejected).toBe(sha);
    expect(status.lastError.message).toMatch(/--path .* is outside the revision/);
    expect((await api.listWebhooks()).map((w) => w.name)).toEqual([]);
  });
});

describe('govops run --render: a command that is not installed (real process)', () => {
  // docs/environments.md: "The render tool must be in the image (the govops image does not ship kustomize)". An image
  // without it started, answered /readyz 200, and rejected every revision ("spawn kustomize ENOENT"): a rollout of
  // such an image replaced a working daemon with one that applies nothing.
  it('a command name found in no PATH folder is refused at start, saying what to do', async () => {
    const home = await cleanup.tmp('govops-render-missing-');
    const d = spawnRun(
      cleanup,
      [
        '--repo', join(home, 'none.git'), '--path', 'env', '--render', 'govops-no-such-render-tool build overlays/prod',
        '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'),
      ],
      { cwd: home, env: { GOVOPS_URL: 'http://127.0.0.1:9', GOVOPS_TOKEN: 't' }, stopSignal: 'SIGKILL' },
    );
    const ended = await Promise.race([d.exit, d.url.then(() => 'started' as const)]);
    expect(ended, d.out()).toBe(1);
    expect(d.out()).toContain('--render: govops-no-such-render-tool is not in any folder of PATH');
    expect(d.out()).toContain('kustomize');
  });

  it('what is checked: a name in an absolute PATH folder or an executable absolute path passes; a relative path is the revision\'s, left to the run', () => {
    const env = { PATH: `.:${dirname(process.execPath)}` };
    expect(renderToolProblem(basename(process.execPath), env)).toBeUndefined();
    expect(renderToolProblem(process.execPath, env)).toBeUndefined();
    expect(renderToolProblem('./render.sh', env)).toBeUndefined();
    expect(renderToolProblem('/nonexistent/kustomize', env)).toBe('/nonexistent/kustomize is not an executable file');
    // the working folder (`.`) is never searched: the revision's files are the commit's
    expect(renderToolProblem('render.sh', { PATH: '.:bin' })).toBe('render.sh is not in any folder of PATH (none absolute)');
  });
});

describe('govops run --render with a directory source (real process)', () => {
  // docs/environments.md: the command runs "in the revision's manifest folder (... the watched folder of --dir)".
  // The directory source's revision is a copy of its YAML files only, so a render input that is not YAML (a jsonnet
  // or script file, a JSON patch, a helm template) was missing where the command ran, and a change to one was no
  // new revision.
  it('the command finds the folder\'s other files, and a change to one of them is a new revision', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    cleanup.add(() => sandbox.close());
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    const home = await cleanup.tmp('govops-render-dir-');
    const watched = join(home, 'env');
    await mkdir(watched);
    await writeFile(join(watched, 'render.mjs'), renderScript(printHooks(['from-dir-a'])));
    await writeFile(join(watched, 'kustomization.yaml'), 'resources: []\n');

    const d = spawnRun(
      cleanup,
      [
        '--dir', watched, '--interval', '10m', '--resync', '10m',
        '--render', `${process.execPath} render.mjs`, '--render-timeout', '5s',
        '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--workdir', join(home, 'work'), '--grace', '5s',
      ],
      { cwd: home, env: { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken }, stopSignal: 'SIGKILL' },
    );
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    const status = async () => (await getJson(`${url}/status`)).body;
    const hooks = async () => (await api.listWebhooks()).map((w) => w.name).sort();
    await until(async () => (await status()).revision.lastApplied !== undefined || (await status()).revision.rejected !== undefined, 20_000, 'first revision done');
    expect((await status()).revision.rejected, JSON.stringify((await status()).lastReconcile)).toBeUndefined();
    expect(await hooks()).toEqual(['from-dir-a']);

    await writeFile(join(watched, 'render.mjs'), renderScript(printHooks(['from-dir-a', 'from-dir-b'])));
    await until(async () => (await hooks()).length === 2, 20_000, 'the changed render input applied');
    expect(await hooks()).toEqual(['from-dir-a', 'from-dir-b']);
  });
});
