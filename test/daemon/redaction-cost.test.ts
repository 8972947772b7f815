/**
 * What a manifest's author writes reaches the daemon's answers and log (a long value cut: report.ts): a config value that differs from the
 * service's is shown in /status (`resources[].fields[].desired`, `lastDrift`) and logged at each resync (`drift: …`).
 * Every answer and line passes the redactor, which reads a text holding `\ % & +` through up to 24 decoded views
 * (src/util/decoded-views.ts): a value dense with escapes cost ~25 scans of its length at each /status request and
 * each resync's line, ~1 s of CPU a megabyte on the event loop that also answers /healthz. The work is counted here
 * (the characters the views read), never timed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';

const read = vi.hoisted(() => ({ chars: 0 }));
vi.mock('../../src/util/decoded-views.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../../src/util/decoded-views.js')>();
  return {
    ...m,
    *decodedViews(text: string) {
      for (const v of m.decodedViews(text)) {
        read.chars += v.text.length;
        yield v;
      }
    },
  };
});

const { registerAuthoredSecretsInForce, registerSecrets, REDACTED } = await import('../../src/util/redact.js');
const { startHttpServer } = await import('../../src/daemon/server.js');
const { createLogger } = await import('../../src/log.js');
const { DRIFT_VALUE_MAX_CHARS, logDrift } = await import('../../src/daemon/report.js');
const { startRunning } = await import('../../src/daemon/run.js');
const { ServiceClient } = await import('../../src/api/client.js');
const { Cleanup, GOVOPS_SECRET_LAKE_TOKEN, runSettings, until } = await import('./helpers.js');

const OPERATOR = 'operator-token-5f1c0d9e';
const AUTHORED = 'authored-literal-8e2a7b';
registerSecrets(OPERATOR);
registerAuthoredSecretsInForce(AUTHORED);

/** ~200 kB a manifest's author may write in a config value: every family of escape, densely. */
const HOSTILE = '\\u0041%41&amp;+\\\\%2541&#x41;'.repeat(8000);

const closers: Array<() => Promise<void>> = [];
const cleanup = new Cleanup();
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await cleanup.run();
});

describe('the redactor reads an author\'s escapes once, not at each answer or line', () => {
  it('/status asked three times: the hostile value is read through its views once', async () => {
    const status = {
      resources: [{ kind: 'Integration', name: 'lake', action: 'update', syncState: 'out_of_sync', fields: [{ path: 'config.description', live: 'x', desired: HOSTILE }] }],
      // an echo of the operator's value beside it is still replaced at every answer
      lastError: { message: `the service said ${encodeURIComponent(encodeURIComponent(OPERATOR))}` },
    };
    const http = await startHttpServer({ host: '127.0.0.1', port: 0 }, { ready: () => ({ ready: true }), status: () => status, registry: new Registry(), onPush: () => true }, createLogger({ level: 'silent' }));
    closers.push(() => http.close());
    const perRequest: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = read.chars;
      const text = await (await fetch(`${http.url}/status`)).text();
      perRequest.push(read.chars - before);
      const body = JSON.parse(text) as typeof status;
      expect(body.resources[0]!.fields[0]!.desired).toBe(HOSTILE);
      expect(body.lastError.message).toBe(`the service said ${REDACTED}`);
      expect(text).not.toContain(OPERATOR);
    }
    // the first answer reads it (24 views of ~200 kB); the next two read none of it again
    expect(perRequest[0]).toBeGreaterThan(10 * HOSTILE.length);
    expect(perRequest[1]! + perRequest[2]!).toBeLessThan(HOSTILE.length);
  });

  it("a resync's drift line repeated: the hostile value is read through its views once", () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: new Writable({ write: (c: Buffer, _e, cb) => { lines.push(c.toString()); cb(); } }) });
    const drift = { revision: 'r1', at: '2026-11-28T00:00:00.000Z', repaired: false, resources: [{ kind: 'Integration' as const, name: 'lake', action: 'update', fields: [{ path: 'config.description', live: `x ${OPERATOR}`, desired: HOSTILE }] }] };
    const perResync: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = read.chars;
      logDrift(logger, drift);
      perResync.push(read.chars - before);
    }
    expect(lines.length).toBe(6);
    for (const l of lines) expect(l).not.toContain(OPERATOR);
    expect(lines.filter((l) => l.includes(REDACTED)).length).toBe(3);
    expect(perResync[0]).toBeGreaterThan(10 * HOSTILE.length);
    expect(perResync[1]! + perResync[2]!).toBeLessThan(HOSTILE.length);
  });

  it('govops run --observe: a manifest whose config value is dense with escapes is read once, not at each /status', async () => {
    const dir = await cleanup.tmp('govops-manifests-');
    const home = await cleanup.tmp('govops-home-');
    // --observe: planned against the sandbox, never applied, so the create stays out of sync and its fields shown
    const { startSandbox } = await import('../../src/sandbox/index.js');
    const sandbox = await startSandbox({ port: 0, transitionMs: 50 });
    cleanup.add(() => sandbox.close());
    const value = `/sql/${HOSTILE.slice(0, 100_000)}`;
    await import('node:fs/promises').then((fs) => fs.writeFile(`${dir}/lake.yaml`, `apiVersion: govops/v1
kind: Integration
metadata:
  name: lake
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://lake.example.com
    httpPath: '${value}'
    token: { fromEnv: GOVOPS_SECRET_TEST_LAKE_TOKEN }
`));
    const settings = runSettings(home, { dir, observe: true, env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN } });
    const running = await startRunning(settings, createLogger({ level: 'silent' }), (onRequest) => new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }));
    cleanup.add(() => running.shutdown(2000));
    const url = running.daemon.url;
    const shown = async (): Promise<boolean> => {
      const body = (await (await fetch(`${url}/status`)).json()) as { resources?: Array<{ fields?: Array<{ path: string; desired?: unknown }> }> };
      // shown cut (driftValue): its beginning and its length
      return body.resources?.[0]?.fields?.some((f) => f.desired === `${value.slice(0, DRIFT_VALUE_MAX_CHARS)}… (${value.length} characters in all; govops plan shows the whole value)`) === true;
    };
    await until(shown, 30_000, 'the value in /status');
    const perRequest: number[] = [];
    for (let i = 0; i < 2; i++) {
      const before = read.chars;
      expect(await shown()).toBe(true);
      perRequest.push(read.chars - before);
    }
    expect(perRequest[0]! + perRequest[1]!).toBeLessThan(value.length);
  });
});
