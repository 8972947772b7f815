/**
 * HTTPS-style token auth for real: a smart-HTTP Git server (node:http in front of git-http-backend,
 * 127.0.0.1) that demands Basic auth. GOVOPS_GIT_TOKEN must get through via GIT_ASKPASS, and never
 * show up in logs, /status descriptions or the cache repo's config.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { GitSource } from '../../src/sources/git.js';
import { createLogger } from '../../src/log.js';
import { createRepo } from './gitrepo.js';

const TOKEN = 'ghp_s3cr3tT0kenValue';
let cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

function gitHttpServer(projectRoot: string, seen: string[]): Promise<Server> {
  const backend = join(execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim(), 'git-http-backend');
  const server = createServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth ? Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString() : '(none)');
    if (auth !== `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn(backend, [], {
      env: {
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: 'x-access-token',
        PATH: process.env.PATH,
      },
    });
    req.pipe(cgi.stdin);
    let buf = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of buf.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = parseInt(v, 10);
        else res.setHeader(k, v);
      }
      res.statusCode = status;
      res.write(buf.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

describe('GitSource over HTTP with a token', () => {
  it('authenticates with GOVOPS_GIT_TOKEN through GIT_ASKPASS and never leaks it', async () => {
    const repo = await createRepo();
    cleanups.push(repo.cleanup);
    const sha = await repo.commit({ 'a.yaml': 'x' });
    const seen: string[] = [];
    const server = await gitHttpServer(repo.base, seen);
    cleanups.push(() => new Promise((r) => server.close(r)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/remote.git`;
    const workdir = await mkdtemp(join(tmpdir(), 'govops-gitauth-'));
    cleanups.push(() => rm(workdir, { recursive: true, force: true }));
    const logs: string[] = [];
    const logger = createLogger({ destination: new Writable({ write(c, _e, cb) { logs.push(String(c)); cb(); } }), level: 'trace' });

    // Without the token: the fetch fails (no prompt, no hang), reported as a failure.
    const oks: boolean[] = [];
    const anon = new GitSource({ url, workdir: join(workdir, 'anon'), intervalMs: 60_000, logger, env: { PATH: process.env.PATH, HOME: workdir }, hooks: { onFetch: (_s, ok) => void oks.push(ok) } });
    await anon.start();
    await anon.stop();
    expect(oks).toEqual([false]);
    expect(anon.current()).toBeUndefined();

    const source = new GitSource({
      url,
      workdir: join(workdir, 'auth'),
      intervalMs: 60_000,
      logger,
      env: { PATH: process.env.PATH, HOME: workdir, GOVOPS_GIT_TOKEN: TOKEN },
    });
    await source.start();
    cleanups.push(() => source.stop());
    expect(source.current()?.id).toBe(sha);
    expect(seen).toContain(`x-access-token:${TOKEN}`);
    expect(logs.join('')).not.toContain(TOKEN);
    expect(await readFile(join(workdir, 'auth', 'repo.git', 'config'), 'utf8')).not.toContain(TOKEN);
    expect(await readFile(join(workdir, 'auth', 'askpass.sh'), 'utf8')).not.toContain(TOKEN);
  });
});

describe('GitSource ask-pass: the token answers the configured remote only', () => {
  it('a remote that redirects to another host: that host asks for credentials and gets none', async () => {
    const repo = await createRepo();
    cleanups.push(repo.cleanup);
    await repo.commit({ 'a.yaml': 'x' });
    // The other host: records what it is sent and asks for credentials (401), as a Git or LFS server would.
    const elsewhere: string[] = [];
    const other = createServer((req, res) => {
      const auth = req.headers.authorization ?? '';
      elsewhere.push(auth ? Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString() : '(none)');
      res.writeHead(401, { 'www-authenticate': 'Basic realm="elsewhere"' });
      res.end();
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => other.close(r)));
    const otherPort = (other.address() as AddressInfo).port;
    const remote = createServer((req, res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${otherPort}${req.url ?? '/'}` });
      res.end();
    });
    await new Promise<void>((r) => remote.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => remote.close(r)));
    const workdir = await mkdtemp(join(tmpdir(), 'govops-gitredirect-'));
    cleanups.push(() => rm(workdir, { recursive: true, force: true }));
    const oks: boolean[] = [];
    const source = new GitSource({
      url: `http://127.0.0.1:${(remote.address() as AddressInfo).port}/remote.git`,
      workdir: join(workdir, 'w'),
      intervalMs: 60_000,
      logger: createLogger({ level: 'silent' }),
      env: { PATH: process.env.PATH, HOME: workdir, GIT_CONFIG_NOSYSTEM: '1', GOVOPS_GIT_TOKEN: TOKEN },
      hooks: { onFetch: (_s, ok) => void oks.push(ok) },
    });
    await source.start();
    cleanups.push(() => source.stop());
    expect(oks).toEqual([false]);
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(elsewhere.filter((a) => a !== '(none)')).toEqual([]);
  });
});

describe('GitSource over SSH', () => {
  it('fetches an ssh:// URL through the operator\'s GIT_SSH_COMMAND (the usual SSH mechanism)', async () => {
    const repo = await createRepo();
    cleanups.push(repo.cleanup);
    const sha = await repo.commit({ 'a.yaml': 'x' });
    const workdir = await mkdtemp(join(tmpdir(), 'govops-gitssh-'));
    cleanups.push(() => rm(workdir, { recursive: true, force: true }));
    // A stand-in for ssh: records how it was called and runs the remote command locally
    // (git calls `<ssh> [options] <host> "git-upload-pack '<path>'"`).
    const calls = join(workdir, 'ssh-calls.txt');
    const fakeSsh = join(workdir, 'fake-ssh.sh');
    await writeFile(fakeSsh, `#!/bin/sh\necho "$@" >> '${calls}'\nfor last; do :; done\nexec sh -c "$last"\n`);
    await chmod(fakeSsh, 0o755);
    const source = new GitSource({
      url: `ssh://git@127.0.0.1${repo.bare}`,
      workdir: join(workdir, 'w'),
      intervalMs: 60_000,
      logger: createLogger({ level: 'silent' }),
      env: { PATH: process.env.PATH, HOME: workdir, GIT_SSH_COMMAND: `${fakeSsh} -i /keys/id_ed25519` },
    });
    await source.start();
    cleanups.push(() => source.stop());
    expect(source.current()?.id).toBe(sha);
    const seen = await readFile(calls, 'utf8');
    expect(seen).toContain('-i /keys/id_ed25519');
    expect(seen).toContain('git@127.0.0.1');
    expect(seen).toContain(`git-upload-pack '${repo.bare}'`);
  });
});
