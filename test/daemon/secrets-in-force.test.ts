/**
 * The daemon's redactor holds the manifest secrets in force, not every secret it ever resolved (issue 23): a
 * rotated-away value is released once no attempt the daemon still shows was made with it. Real parts: a watched
 * folder, the engine, the sandbox over HTTP.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning } from '../../src/daemon/run.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { REDACTED, Redactor, secretRedactor } from '../../src/util/redact.js';
import { lakehouseManifest } from '../helpers/manifests.js';
import { Cleanup, getJson, runSettings, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const OLD = 'old-lake-token-1f8e';
const NEW = 'new-lake-token-7c2a';

describe('Redactor generations', () => {
  it('releases manifest values no generation from the oldest shown on resolved; tokens of the run stay', () => {
    const r = new Redactor();
    r.add('api-token-value');
    r.inForce(OLD, 'kept-secret-value');
    r.nextGeneration();
    r.inForce(NEW, 'kept-secret-value');
    r.release(r.generation - 1); // the previous reconcile is still shown
    expect(r.redactText(OLD)).toBe(REDACTED);
    r.release(r.generation);
    expect(r.redactText(`${OLD} ${NEW} kept-secret-value api-token-value`)).toBe(`${OLD} ${REDACTED} ${REDACTED} ${REDACTED}`);
    expect(r.size).toBe(3);
  });
});

/**
 * A daemon watching a folder with one lakehouse whose token is GOVOPS_SECRET_OLD (`oldValue`); GOVOPS_SECRET_NEW holds
 * `newValue`, for a rotation by rewriting the manifest with `manifest('GOVOPS_SECRET_NEW')`.
 */
async function rotatingDaemon(oldValue: string, newValue: string) {
  const sandbox = await startSandbox({ port: 0, transitionMs: 20 });
  cleanup.add(() => sandbox.close());
  const dir = await cleanup.tmp('govops-manifests-');
  const home = await cleanup.tmp('govops-home-');
  const manifest = (env: string) => lakehouseManifest({ name: 'lake', host: 'lake1.example.com', httpPath: '/sql/1', tokenEnv: env });
  await writeFile(join(dir, 'lake.yaml'), manifest('GOVOPS_SECRET_OLD'));
  const settings = runSettings(home, { dir, env: { ...process.env, GOVOPS_SECRET_OLD: oldValue, GOVOPS_SECRET_NEW: newValue } });
  const running = await startRunning(settings, silentLogger(), (onRequest) =>
    new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
  );
  cleanup.add(() => running.shutdown(2000));
  return { sandbox, dir, url: running.daemon.url, manifest };
}

describe('the daemon and rotated secrets', () => {
  it('drops a rotated-away secret once the reconcile that used it is no longer shown', async () => {
    const { sandbox, dir, url, manifest } = await rotatingDaemon(OLD, NEW);
    const applied = async (n: number) =>
      until(async () => {
        const s = (await getJson(`${url}/status`)).body;
        return s.lastReconcile?.result === 'applied' && !s.running && s.revision.lastApplied === s.revision.latest && n === (await sandbox.requests()).filter((q) => q.method !== 'GET' && !q.query.dryRun).length ? s : undefined;
      }, 20_000, `write ${n} applied`);
    await applied(1); // the create
    expect(secretRedactor.redactText(OLD)).toBe(REDACTED);

    await writeFile(join(dir, 'lake.yaml'), manifest('GOVOPS_SECRET_NEW'));
    await applied(2); // the token update
    expect(secretRedactor.redactText(NEW)).toBe(REDACTED);
    expect(secretRedactor.redactText(OLD)).toBe(OLD); // nothing shown came from a reconcile that used it
  });
});

describe('the daemon and rotated secrets after a rejected revision', () => {
  it('a rejected revision no longer holds secrets in force once a newer one came: a later rotation still releases the old value', async () => {
    const OLD2 = 'old-lake-token-9d41';
    const NEW2 = 'new-lake-token-2b77';
    const { sandbox, dir, url, manifest } = await rotatingDaemon(OLD2, NEW2);
    const status = async () => (await getJson(`${url}/status`)).body;
    const settled = (test: (s: any) => boolean, what: string) =>
      until(async () => {
        const s = await status();
        return !s.running && s.revision.latest !== undefined && test(s) ? s : undefined;
      }, 20_000, what);
    await settled((s) => s.lastReconcile?.result === 'applied' && s.revision.lastApplied === s.revision.latest, 'the create applied');

    // A broken file: the revision is rejected (and shown as such while it is the latest).
    await writeFile(join(dir, 'broken.yaml'), 'kind: [unclosed\n');
    const rejected = await settled((s) => s.revision.rejected !== undefined && s.revision.rejected === s.revision.latest, 'the broken revision rejected');
    // Fixed: a newer revision, in sync; the rejected one is no longer shown.
    await writeFile(join(dir, 'broken.yaml'), '# fixed\n');
    await settled((s) => s.revision.latest !== rejected.revision.latest && s.revision.lastGood === s.revision.latest && s.revision.rejected === undefined, 'the fixed revision reconciled');

    await writeFile(join(dir, 'lake.yaml'), manifest('GOVOPS_SECRET_NEW'));
    await until(async () => ((await sandbox.requests()).some((q) => q.method === 'PUT' && !q.query.dryRun) ? true : undefined), 20_000, 'the token update sent');
    await settled((s) => s.lastReconcile?.result === 'applied' && s.revision.lastApplied === s.revision.latest, 'the token update applied');
    expect(secretRedactor.redactText(NEW2)).toBe(REDACTED);
    expect(secretRedactor.redactText(OLD2)).toBe(OLD2);
  });
});
