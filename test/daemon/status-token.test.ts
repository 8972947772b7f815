/**
 * Issue 27: `/status` names resources, revisions, errors and webhook receivers, and answers anyone who reaches
 * the listen address unless the operator gives a bearer token (`--status-token-file` or GOVOPS_STATUS_TOKEN):
 * then only `Authorization: Bearer <token>` reads it (compared in constant time); /healthz, /readyz and /metrics
 * stay open for probes and scrapers.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { silentLogger } from '../../src/log.js';
import { startHttpServer } from '../../src/daemon/server.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, spawnRun } from './helpers.js';

const TOKEN = 'status-token-7f3a9c2e';
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const get = (url: string, authorization?: string) => fetch(url, authorization ? { headers: { authorization } } : {});

describe('/status bearer token', () => {
  it('with a token: 401 (WWW-Authenticate: Bearer) without it or with another; 200 with it; the other endpoints stay open', async () => {
    const handlers = { ready: () => ({ ready: true }), status: () => ({ revision: 'abc' }), registry: new Registry(), onPush: () => true, statusToken: TOKEN };
    const http = await startHttpServer({ host: '127.0.0.1', port: 0 }, handlers, silentLogger());
    cleanup.add(() => http.close());
    const none = await get(`${http.url}/status`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await none.text()).not.toContain('abc');
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`, 'Bearer ']) {
      expect((await get(`${http.url}/status`, wrong)).status, wrong).toBe(401);
    }
    const ok = await get(`${http.url}/status`, `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ revision: 'abc' });
    expect((await get(`${http.url}/status`, `bearer ${TOKEN}`)).status).toBe(200);
    for (const open of ['/healthz', '/readyz', '/metrics']) expect((await get(`${http.url}${open}`)).status, open).toBe(200);
  });

  it('without a token /status is open (the default, documented)', async () => {
    const handlers = { ready: () => ({ ready: true }), status: () => ({ revision: 'abc' }), registry: new Registry(), onPush: () => true };
    const http = await startHttpServer({ host: '127.0.0.1', port: 0 }, handlers, silentLogger());
    cleanup.add(() => http.close());
    expect((await get(`${http.url}/status`)).status).toBe(200);
  });

  it.each(['file', 'env'] as const)('govops run with the token from %s: /status needs it, the token is never logged', async (from) => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    await repo.commit({ 'lake.yaml': lakehouse('lake', '/sql/1') });
    const home = await cleanup.tmp('govops-status-token-');
    await writeFile(join(home, 'status-token'), `${TOKEN}\n`);
    const env: Record<string, string> = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN };
    const args = ['--repo', repo.bare, '--listen', '127.0.0.1:0', '--state', join(home, 'state.json'), '--log-level', 'debug'];
    if (from === 'file') args.push('--status-token-file', join(home, 'status-token'));
    else env.GOVOPS_STATUS_TOKEN = TOKEN;
    const d = spawnRun(cleanup, args, { cwd: home, env, stopSignal: 'SIGKILL' });
    const url = await Promise.race([d.url, d.exit.then((c) => Promise.reject(new Error(`exited ${c}: ${d.out()}`)))]);
    expect((await get(`${url}/status`)).status).toBe(401);
    expect((await get(`${url}/status`, `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await get(`${url}/metrics`)).status).toBe(200);
    expect(d.out()).not.toContain(TOKEN);
  });
});
