/**
 * GET /status has a type (src/daemon/status.ts) and a published JSON Schema (schemas/status.json): a live answer
 * validates against it after an apply, a rejected revision and a failure. Real parts: a watched folder, the
 * engine, the sandbox over HTTP.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning } from '../../src/daemon/run.js';
import type { DaemonStatus, LastError } from '../../src/daemon/status.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, runSettings, until, webhook } from './helpers.js';

const require = createRequire(import.meta.url);
const Ajv2020 = (require('ajv/dist/2020.js') as { default: new (o: object) => { compile(s: object): ((v: unknown) => boolean) & { errors?: unknown } } }).default;
const addFormats = (require('ajv-formats') as { default: (a: unknown) => void }).default;
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const schema = JSON.parse(readFileSync(new URL('../../schemas/status.json', import.meta.url), 'utf8')) as object;
const validate = ajv.compile(schema);

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

function expectValid(status: DaemonStatus, when: string): void {
  expect(validate(status), `${when}: ${JSON.stringify(validate.errors, null, 2)}`).toBe(true);
}

describe('GET /status against schemas/status.json', () => {
  it('validates after an apply, a rejected revision and a failed write', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    cleanup.add(() => sandbox.close());
    const dir = await cleanup.tmp('govops-manifests-');
    const home = await cleanup.tmp('govops-home-');
    await writeFile(join(dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    await writeFile(join(dir, 'hook.yaml'), webhook('hook1', 'https://hooks.example.com/a'));
    const settings = runSettings(home, { dir, plan: { prune: true, allowReplace: false }, env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN } });
    const running = await startRunning(settings, silentLogger(), (onRequest) =>
      new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
    );
    cleanup.add(() => running.shutdown(2000));
    const url = running.daemon.url;
    const status = async () => (await getJson(`${url}/status`)).body as DaemonStatus;

    expectValid(await status(), 'at start');
    const applied = await until(async () => {
      const s = await status();
      return s.lastReconcile?.result === 'applied' && !s.running ? s : undefined;
    }, 20_000, 'applied') as DaemonStatus;
    expect(applied.resources.length).toBe(2);
    expectValid(applied, 'applied');

    await writeFile(join(dir, 'broken.yaml'), 'apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: broken\nspec:\n  type: lakehouse\n  autoBootstrap: true\n  config:\n    port: not-a-number\n');
    const rejected = await until(async () => {
      const s = await status();
      return s.lastError?.result === 'invalid' && !s.running ? s : undefined;
    }, 20_000, 'rejected') as DaemonStatus;
    expect((rejected.lastError as LastError).diagnostics.length).toBeGreaterThan(0);
    expectValid(rejected, 'rejected');

    // A write the service refuses (400 on every create): a failure with outcomes.
    sandbox.faults.add({ type: 'error', status: 400, method: 'POST', path: '/integrations', count: 100 });
    await writeFile(join(dir, 'broken.yaml'), lakehouse('twin', '/sql/9', 'lake2.example.com'));
    const failed = await until(async () => {
      const s = await status();
      return s.lastError?.result === 'failed' && !s.running ? s : undefined;
    }, 20_000, 'failed') as DaemonStatus;
    expect((failed.lastError as LastError).failures.length).toBeGreaterThan(0);
    expectValid(failed, 'failed');
  });
});
