/**
 * An unreachable Git remote (a real repository moved away): /status `source` says when the last fetch was tried,
 * that it fails, with which error and since when, and `lastError` is that fetch error rather than an older
 * problem of a reconcile; readiness is unchanged (the last revision stays in force). Once the remote is back
 * the source says so and `lastError` is what the last reconcile left.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rename } from 'node:fs/promises';
import { ServiceClient } from '../../src/api/client.js';
import { ErrorCode } from '../../src/errors.js';
import { startRunning } from '../../src/daemon/run.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { createRepo } from '../sources/gitrepo.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, runSettings, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('daemon: an unreachable Git remote', () => {
  it('/status shows the fetch failing (error, since when, last attempt), not an older reconcile error', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const repo = await createRepo();
    cleanup.add(() => repo.cleanup());
    const home = await cleanup.tmp('govops-srchealth-');
    const sha1 = await repo.commit({ 'lake.yaml': lakehouse('lake', '/sql/1') });
    const settings = runSettings(home, {
      repo: repo.bare,
      intervalMs: 150,
      env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN },
    });
    const running = await startRunning(settings, silentLogger(), (onRequest) =>
      new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
    );
    cleanup.add(() => running.shutdown(2000));
    const url = running.daemon.url;
    const status = async () => (await getJson(`${url}/status`)).body;
    await until(async () => (await status()).revision.lastApplied === sha1, 20_000, 'first commit applied');
    const ok = await status();
    expect(ok.source).toMatchObject({ type: 'git', ok: true, consecutiveFailures: 0, lastAttemptAt: expect.any(String), lastSuccessAt: expect.any(String) });
    expect(ok.source.error).toBeUndefined();

    // an older problem: an invalid commit, rejected (its error is the last reconcile's)
    const sha2 = await repo.commit({ 'bad.yaml': 'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: bad\nspec:\n  url: https://x.example.com\n  global: maybe\n' });
    await until(async () => (await status()).revision.rejected === sha2, 20_000, 'rejected');
    expect((await status()).lastError).toMatchObject({ revision: sha2, result: 'invalid' });

    // the remote goes away
    const before = Date.now();
    await rename(repo.bare, `${repo.bare}.gone`);
    const failing = await until(async () => {
      const s = await status();
      return s.source.ok === false && s.source.consecutiveFailures >= 2 ? s : undefined;
    }, 20_000, 'fetch failures');
    expect(failing.source).toMatchObject({ type: 'git', ok: false, error: expect.stringMatching(/remote\.git/), lastSuccessAt: expect.any(String) });
    expect(Date.parse(failing.source.failingSince)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(failing.source.lastAttemptAt)).toBeGreaterThan(Date.parse(failing.source.failingSince));
    expect(Date.parse(failing.source.lastSuccessAt)).toBeLessThanOrEqual(Date.parse(failing.source.failingSince));
    // the newest problem is the fetch: that is the last error now
    expect(failing.lastError).toMatchObject({ stage: 'source', code: ErrorCode.sourceFetch, since: failing.source.failingSince, message: failing.source.error });
    // the last revision stays in force: readiness does not depend on the remote
    expect(failing.ready).toBe(true);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${url}/metrics`)).text()).toMatch(/^govops_git_fetch_failures_total [1-9]\d*$/m);

    // back: the source is fine again; the last error is the rejected commit's again
    await rename(`${repo.bare}.gone`, repo.bare);
    const back = await until(async () => {
      const s = await status();
      return s.source.ok === true ? s : undefined;
    }, 20_000, 'fetch recovered');
    expect(back.source.failingSince).toBeUndefined();
    expect(back.source.error).toBeUndefined();
    expect(back.lastError).toMatchObject({ revision: sha2, result: 'invalid' });
  });
});
