/**
 * The daemon in-process with every real part: a watched folder, the reconcile engine, the HTTP
 * client and the sandbox over HTTP, and the daemon's own endpoints over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning, type RunSettings } from '../../src/daemon/run.js';
import { githubSignature } from '../../src/daemon/hooks.js';
import { acquireStateLock } from '../../src/state/lock.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { Cleanup, getJson, lakehouse, GOVOPS_SECRET_LAKE_TOKEN, until, webhook, runSettings } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function setup(opts: Partial<RunSettings> & { sandbox?: SandboxHandle | 'none' } = {}) {
  const sandbox = opts.sandbox === 'none' ? undefined : (opts.sandbox ?? (await startSandbox({ port: 0, transitionMs: 50 })));
  if (sandbox && !opts.sandbox) cleanup.add(() => sandbox.close());
  const dir = await cleanup.tmp('govops-manifests-');
  const home = await cleanup.tmp('govops-home-');
  /** Beside the watched folder, on the same file system: where a file is written before it is renamed in. */
  const scratch = await cleanup.tmp('govops-scratch-');
  const settings = runSettings(home, {
    dir,
    hookSecret: 'hook-secret',
    env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN },
    ...opts,
  });
  const baseUrl = sandbox?.url ?? 'http://127.0.0.1:1';
  const token = sandbox?.adminToken ?? 'x';
  return {
    sandbox,
    dir,
    scratch,
    settings,
    /**
     * Write `file` of the watched folder whole: beside it, then renamed in. A scan sees the old text or the new one,
     * never the file truncated or half written (on a busy machine a scan did read one between the two: an extra
     * revision, rejected or applied, that no step meant).
     */
    async swap(file: string, text: string) {
      const tmp = join(scratch, file);
      await writeFile(tmp, text);
      await rename(tmp, join(dir, file));
    },
    /** Start the daemon; with `logs`, every log line is collected there. */
    async start(logs?: string[]) {
      const logger = logs ? pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _e, cb) => { logs.push(chunk.toString()); cb(); } })) : silentLogger();
      const running = await startRunning(settings, logger, (onRequest) =>
        new ServiceClient({ baseUrl, token, onRequest, retries: 0 }),
      );
      cleanup.add(() => running.shutdown(2000));
      return running;
    },
    api() {
      const c = new ServiceClient({ baseUrl, token });
      cleanup.add(() => c.close());
      return c;
    },
  };
}

describe('govops daemon (directory source, real engine, sandbox)', () => {
  it('applies the folder, then edits; rejects an invalid edit keeping the last good revision; serves the endpoints', async () => {
    const t = await setup();
    await writeFile(join(t.dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    await writeFile(join(t.dir, 'hooks.yaml'), webhook('hook1', 'https://hooks.example.com/a'));
    const { daemon } = await t.start();
    const api = t.api();
    const url = daemon.url;

    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await until(async () => (await fetch(`${url}/readyz`)).status === 200, 15_000, 'ready');
    const lakes = await until(async () => {
      const l = await api.listIntegrations();
      return l.length === 1 && l[0]!.status === 'enabled' ? l : undefined;
    });
    expect(lakes![0]!.config.httpPath).toBe('/sql/1');
    expect((await api.listWebhooks()).map((w) => w.name)).toEqual(['hook1']);

    let status = (await getJson(`${url}/status`)).body;
    expect(status.source).toMatchObject({ type: 'dir', location: t.dir });
    expect(status.revision.lastApplied).toMatch(/^sha256:/);
    expect(status.lastReconcile).toMatchObject({ result: 'applied', reason: 'revision' });
    expect(status.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'Integration', name: 'lake', syncState: 'synced' }),
        expect.objectContaining({ kind: 'Webhook', name: 'hook1', syncState: 'synced' }),
      ]),
    );
    const firstRevision = status.revision.lastApplied as string;

    // Edit a field: applied.
    await t.swap('lake.yaml', lakehouse('lake', '/sql/2'));
    await until(async () => (await api.listIntegrations())[0]?.config.httpPath === '/sql/2', 15_000, 'edit applied');
    status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.revision.lastApplied !== firstRevision && !s.running ? s : undefined;
    }, 15_000, 'edit recorded');
    expect(status.lastReconcile).toMatchObject({ result: 'applied', summary: { update: 1 } });
    const goodRevision = status.revision.lastGood as string;

    // An invalid edit (a valid change plus one broken file): nothing of it is applied. The broken file
    // is written first and seen rejected before the valid change is made, so no scan can catch a state
    // with only the valid change (a scan that listed the folder before broken.yaml existed could
    // otherwise read lake.yaml after its edit: a busy machine did).
    const snapshot = (id: string, file: string) => readFile(join(t.settings.workdir, 'snapshots', id.replace(/^sha256:/, ''), file), 'utf8');
    await t.swap('broken.yaml', 'apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: broken\nspec:\n  type: lakehouse\n  autoBootstrap: true\n  config:\n    port: not-a-number\n');
    await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.revision.rejected && s.revision.rejected === s.revision.latest && !s.running && (await snapshot(s.revision.rejected, 'broken.yaml')).includes('not-a-number');
    }, 15_000, 'broken.yaml rejected');
    await t.swap('lake.yaml', lakehouse('lake', '/sql/3'));
    // Wait for the rejection of the revision holding both files (its snapshot has lake.yaml at /sql/3).
    status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.revision.rejected && s.revision.rejected === s.revision.latest && !s.running && (await snapshot(s.revision.rejected, 'lake.yaml')).includes('/sql/3') ? s : undefined;
    }, 15_000, 'rejection');
    expect(status.revision.lastGood).toBe(goodRevision);
    expect(status.lastError.result).toBe('invalid');
    const at = status.lastError.diagnostics.map((d: { at: string }) => d.at).join('\n');
    expect(at).toContain(`${t.dir}/broken.yaml:`);
    expect(status.lastError.message).toContain('broken.yaml:');
    expect((await api.listIntegrations())[0]!.config.httpPath).toBe('/sql/2');
    expect((await fetch(`${url}/readyz`)).status).toBe(200); // the last good revision is still in force

    // The resync keeps using the last good revision (not the rejected one).
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    status = (await getJson(`${url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync', revision: goodRevision, result: 'in-sync' });

    // Fixing the file: applied.
    await t.swap('broken.yaml', webhook('hook2', 'https://hooks.example.com/b'));
    await until(async () => (await api.listIntegrations())[0]?.config.httpPath === '/sql/3', 15_000, 'fix applied');
    await until(async () => (await api.listWebhooks()).length === 2);
    status = await until(async () => {
      const s = (await getJson(`${url}/status`)).body;
      return s.revision.lastApplied === s.revision.latest && !s.running ? s : undefined;
    }, 15_000, 'fix recorded');
    expect(status.lastError).toBeUndefined();

    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/govops_reconcile_total\{result="applied"\} 3/);
    expect(metrics).toMatch(/govops_reconcile_total\{result="invalid"\} [12]\n/); // 2 if the watcher caught the broken file alone
    expect(metrics).toMatch(/govops_reconcile_duration_seconds_count\{result="applied"\} \d/);
    expect(metrics).toMatch(/govops_resources\{kind="lakehouse",sync_state="synced"\} 1/);
    expect(metrics).toMatch(/govops_resources\{kind="webhook",sync_state="synced"\} 2/);
    expect(metrics).toMatch(/govops_last_applied_revision_info\{revision="sha256:[0-9a-f]+"\} 1/);
    expect(metrics).toMatch(/govops_last_applied_timestamp_seconds \d{10}/);
    expect(metrics).toMatch(/govops_drift_detected 0/);
    expect(metrics).toMatch(/govops_api_request_duration_seconds_count\{method="GET",route="\/integrations",status="200"\} \d/);
    expect(metrics).toMatch(/govops_api_request_duration_seconds_count\{method="POST",route="\/integrations",status="200"\} \d/);
    expect(metrics).toContain('govops_git_fetch_failures_total 0');
    expect(metrics).toContain('process_cpu_seconds_total');
    expect(metrics).not.toContain(GOVOPS_SECRET_LAKE_TOKEN);
    expect(JSON.stringify(status)).not.toContain(GOVOPS_SECRET_LAKE_TOKEN);
    expect(await readFile(t.settings.statePath, 'utf8')).not.toContain(GOVOPS_SECRET_LAKE_TOKEN);

    // Unknown paths and methods.
    expect((await fetch(`${url}/nope`)).status).toBe(404);
    expect((await fetch(`${url}/status`, { method: 'POST' })).status).toBe(405);
  });

  it('--prune deletes what left the folder; an unresolvable secret rejects the revision whole; deletes over --max-deletes are refused', async () => {
    const t = await setup({ plan: { prune: true, allowReplace: false, maxDeletes: 1 } });
    const hooks = (...ns: number[]) => ns.map((n) => webhook(`hook${n}`, `https://hooks.example.com/${n}`)).join('---\n');
    // The webhooks live in one file replaced whole (written beside the folder, renamed in): a scan sees
    // the old set or the new one, never a folder half edited. A scan may read a folder while files are
    // removed one by one (a vanished file is skipped), so with separate files a busy machine could apply
    // an in-between set (hook1 pruned alone, within --max-deletes 1) that no step meant.
    const swap = t.swap;
    await swap('hooks.yaml', hooks(1, 2, 3));
    const { daemon } = await t.start();
    const api = t.api();
    const url = daemon.url;
    let seen: string | undefined;
    /**
     * Waits for a revision newer than the last one seen to be reconciled, with `check` true. Each step
     * below edits files in an order where every intermediate state the watcher may catch is one the
     * step's assertions also hold for.
     */
    const settled = async (what: string, check: (s: any) => boolean = () => true) => {
      const s = await until(async () => {
        const b = (await getJson(`${url}/status`)).body;
        const r = b.revision.latest;
        return r && r !== seen && !b.running && !b.revision.pending && b.lastReconcile?.revision === r && check(b) ? b : undefined;
      }, 15_000, what);
      seen = s.revision.latest;
      return s;
    };
    await until(async () => (await api.listWebhooks()).length === 3, 15_000, 'created');
    await settled('first revision');

    // One manifest removed: pruned (1 delete is within --max-deletes 1).
    await swap('hooks.yaml', hooks(1, 2));
    let status = await settled('prune');
    expect(status.lastReconcile).toMatchObject({ result: 'applied', summary: { delete: 1 } });
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['hook1', 'hook2']);
    const good = status.revision.lastGood as string;

    // A manifest whose secret cannot be resolved: rejected whole (the valid webhook beside it is not created).
    // lake.yaml first: the folder with it is rejected whatever the webhooks.
    await swap('lake.yaml', lakehouse('lake', '/sql/1').replace('GOVOPS_SECRET_TEST_LAKE_TOKEN', 'GOVOPS_TEST_NOT_SET_ANYWHERE'));
    await swap('hooks.yaml', hooks(1, 2, 4));
    status = await settled('secret rejection', (b) => /GOVOPS_TEST_NOT_SET_ANYWHERE/.test(b.lastError?.message ?? '') && b.revision.rejected === b.revision.latest);
    expect(status.revision.rejected).toBe(status.revision.latest);
    expect(status.revision.lastGood).toBe(good);
    expect(status.lastError.result).toBe('invalid');
    expect(status.lastError.message).toMatch(/lake\.yaml:\d+/);
    expect(status.lastError.message).toContain('GOVOPS_TEST_NOT_SET_ANYWHERE');
    expect(await api.listIntegrations()).toHaveLength(0);
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['hook1', 'hook2']);

    // A change that would delete 2 resources (> --max-deletes 1): the deletes are refused, the rest of the
    // revision is applied (hook5 created); the refusal is in /status, the metrics and the last error.
    // The webhooks first (still rejected while lake.yaml is there), then lake.yaml goes.
    await swap('hooks.yaml', hooks(5));
    await rm(join(t.dir, 'lake.yaml'));
    status = await settled('max-deletes refusal', (b) => b.deletionGuard?.rule === 'max-deletes');
    expect(status.deletionGuard).toMatchObject({ refused: 2, limit: 1, revision: status.revision.latest });
    expect(status.deletionGuard.message).toMatch(/run with --max-deletes 2/);
    expect(status.revision.rejected).toBeUndefined();
    expect(status.revision.lastGood).toBe(status.revision.latest);
    // held back for a person, nothing failed: the result is `blocked` (not a failure), naming the refused deletes
    expect(status.lastReconcile).toMatchObject({ result: 'blocked', code: 'GOVOPS_BLOCKED' });
    expect(status.lastReconcile.blocked.map((b: { name: string }) => b.name).sort()).toEqual(['hook1', 'hook2']);
    expect(status.lastError).toBeUndefined();
    expect(status.revision.waiting).toBeUndefined();
    expect(status.ready).toBe(true);
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['hook1', 'hook2', 'hook5']);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/govops_revisions_rejected_total [1-9]/);
    expect(metrics).toMatch(/govops_deletions_refused 2/);
  });

  it('--no-adopt: a webhook govops does not own is not adopted; reported blocked, nothing written to it, the rest applied', async () => {
    const t = await setup({ plan: { prune: true, allowReplace: true, noAdopt: true } });
    const api = t.api();
    // made by hand by another team; a manifest of the same name would take it over (and replace it)
    const [theirs] = (await api.createWebhooks([{ url: 'https://team.example.com/in', name: 'team', global: true, notificationType: ['healthCheckFailed'], actionType: 'triggered' }])).createdWebhooks;
    await t.swap('hooks.yaml', [webhook('team', 'https://elsewhere.example.com/in'), webhook('ours', 'https://hooks.example.com/ours')].join('---\n'));
    t.sandbox!.clearRequests();
    const { daemon } = await t.start();
    const status = await until(async () => {
      const b = (await getJson(`${daemon.url}/status`)).body;
      return b.lastReconcile?.result === 'blocked' && !b.running ? b : undefined;
    }, 15_000, 'blocked');
    expect(status.options.noAdopt).toBe(true);
    expect(status.lastReconcile.blocked).toEqual([expect.objectContaining({ kind: 'Webhook', name: 'team' })]);
    const team = status.resources.find((r: { name: string }) => r.name === 'team');
    expect(team).toMatchObject({ syncState: 'blocked' });
    expect(team.error).toMatch(new RegExp(`^blocked: not adopted \\(--no-adopt\\): live webhook ${theirs!.id} matches this manifest`));
    expect(status.lastError).toBeUndefined();
    // the rest of the revision went ahead; nothing was sent about the other team's webhook
    const hooks = await api.listWebhooks();
    expect(hooks.map((w) => `${w.name} ${w.url}`).sort()).toEqual(['ours https://hooks.example.com/ours', 'team https://team.example.com/in']);
    expect(t.sandbox!.requests().filter((r) => r.method !== 'GET' && r.path.includes(theirs!.id))).toEqual([]);
    expect(t.sandbox!.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(JSON.parse(await readFile(t.settings.statePath, 'utf8')).resources.map((r: { name: string }) => r.name)).toEqual(['ours']);
  });

  it('mass deletion: emptying the manifest folder deletes nothing (prune on, default guard) and is reported', async () => {
    const t = await setup({ plan: { prune: true, allowReplace: false } });
    // The four webhooks in one file, removed in one step: with a file each, a scan between two removals
    // could prune the first ones before the folder is empty.
    const hooks = [1, 2, 3, 4].map((n) => webhook(`hook${n}`, `https://hooks.example.com/${n}`)).join('---\n');
    await writeFile(join(t.dir, 'hooks.yaml'), hooks);
    await writeFile(join(t.dir, 'README.md'), 'manifests live here\n');
    const logs: string[] = [];
    const { daemon } = await t.start(logs);
    const api = t.api();
    await until(async () => (await api.listWebhooks()).length === 4, 15_000, 'created');
    await rm(join(t.dir, 'hooks.yaml'));
    const status = await until(async () => {
      const b = (await getJson(`${daemon.url}/status`)).body;
      return b.deletionGuard?.rule === 'empty' && !b.running ? b : undefined;
    }, 15_000, 'refusal reported');
    expect(status.deletionGuard).toMatchObject({ refused: 4, managed: 4 });
    expect(status.deletionGuard.message).toMatch(/manifest set is empty.*--allow-empty/);
    expect(status.ready).toBe(true);
    expect((await api.listWebhooks()).map((w) => w.name).sort()).toEqual(['hook1', 'hook2', 'hook3', 'hook4']);
    expect(t.sandbox!.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/govops_deletions_refused 4/);
    expect(logs.some((l) => /"msg":"mass deletion refused"/.test(l) && /"rule":"empty"/.test(l))).toBe(true);
    // The manifests come back: the refusal clears, nothing was lost.
    await writeFile(join(t.scratch, 'hooks.yaml'), hooks);
    await rename(join(t.scratch, 'hooks.yaml'), join(t.dir, 'hooks.yaml'));
    await until(async () => (await getJson(`${daemon.url}/status`)).body.deletionGuard === undefined, 15_000, 'refusal cleared');
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/govops_deletions_refused 0/);
  });

  it('a revision folder that vanished is an I/O failure: retried after the source restores it, never rejected', async () => {
    const t = await setup();
    await writeFile(join(t.dir, 'hook1.yaml'), webhook('hook1', 'https://hooks.example.com/1'));
    const logs: string[] = [];
    const { daemon } = await t.start(logs);
    await until(async () => (await getJson(`${daemon.url}/status`)).body.lastSuccess, 15_000, 'first reconcile');
    await daemon.loop.idle();
    const revision = daemon.loop.snapshot().lastGood!;
    await rm(revision.root, { recursive: true, force: true });
    daemon.loop.resyncNow();
    await until(() => logs.some((l) => /reconcile failed; will retry/.test(l) && /"code":"GOVOPS_SOURCE_IO"/.test(l)), 15_000, 'the I/O failure');
    await until(() => daemon.loop.snapshot().lastAttempt?.verdict === 'in-sync', 15_000, 'retried and in sync');
    const status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.revision.rejected).toBeUndefined();
    expect(status.revision.lastGood).toBe(revision.id);
    expect(status.ready).toBe(true);
  });

  it('the revision in force published again (its folder restored) is not applied without --self-heal: drift stays reported', async () => {
    const t = await setup();
    const logs: string[] = [];
    const { daemon, api, live } = await lakeApplied(t, logs);
    await editBehindGovops(t.sandbox!, live.id, { httpPath: '/changed/by/hand' });
    // the folder of the revision in force is gone (a cleaner): the resync cannot read it, the source writes it again
    const revision = daemon.loop.snapshot().lastGood!;
    await rm(revision.root, { recursive: true, force: true });
    daemon.loop.resyncNow();
    await until(() => { const a = daemon.loop.snapshot().lastAttempt; return a && a.verdict !== 'failed'; }, 15_000, 'an attempt after the I/O failure');
    await daemon.loop.idle();
    const status = (await getJson(`${daemon.url}/status`)).body;
    // the same revision, tried again as the drift check it was: plan only
    expect(status.lastReconcile).toMatchObject({ revision: revision.id, reason: 'retry', apply: false, result: 'drift' });
    expect(status.drift).toBe(true);
    expect((await api.getIntegration(live.id)).config.httpPath).toBe('/changed/by/hand');
    // published again with nothing failing (the folder gone between two looks): nothing runs, nothing is written
    await rm(revision.root, { recursive: true, force: true });
    const published = (): number => logs.filter((l) => l.includes('"msg":"new directory revision"')).length;
    const attempts = async (): Promise<string> => JSON.stringify((await daemon.metrics.reconcileTotal.get()).values);
    const before = { published: published(), attempts: await attempts() };
    await t.swap('lake.yaml', lakehouse('lake', '/sql/1'));
    await until(() => published() > before.published, 15_000, 'the revision published again');
    await daemon.loop.idle();
    expect(await attempts()).toBe(before.attempts);
    expect((await api.getIntegration(live.id)).config.httpPath).toBe('/changed/by/hand');
  });

  it('logs every problem of a rejected revision on its own file:line:col line', async () => {
    const t = await setup();
    await writeFile(join(t.dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    await writeFile(join(t.dir, 'broken.yaml'), 'apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: broken\nspec:\n  type: lakehouse\n  autoBootstrap: true\n  config:\n    port: not-a-number\n');
    await writeFile(join(t.dir, 'hook.yaml'), 'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: hook\nspec:\n  url: https://hooks.example.com/x\n  global: maybe\n  notificationType: [healthCheckFailed]\n  actionType: triggered\n');
    const logs: string[] = [];
    const { daemon } = await t.start(logs);
    await daemon.loop.idle();
    const status = (await getJson(`${daemon.url}/status`)).body;
    const errors = status.lastError.diagnostics as Array<{ at: string; message: string }>;
    expect(errors.length).toBeGreaterThanOrEqual(3);
    const entries = logs.map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(entries.find((e) => /^revision rejected \(\d+ errors\)/.test(e.msg))).toBeDefined();
    // One error line per diagnostic, its message the file:line:col line itself.
    for (const d of errors) {
      expect(entries.filter((e) => e.level === 50 && e.msg.startsWith(`${d.at}: `) && e.msg.endsWith(d.message))).toHaveLength(1);
    }
    expect(entries.some((e) => e.msg.includes('(and '))).toBe(false);
  });

  it('detects out-of-band drift without --self-heal (reported with the fields, not repaired)', async () => {
    const t = await setup();
    const logs: string[] = [];
    const { daemon, api, live } = await lakeApplied(t, logs);
    await api.updateIntegration(live.id, {
      type: 'lakehouse',
      autoBootstrap: true,
      config: { ...live.config, httpPath: '/changed/by/hand', token: GOVOPS_SECRET_LAKE_TOKEN },
    });
    await until(async () => (await api.getIntegrationStatus(live.id)).status === 'enabled');
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    const status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.drift).toBe(true);
    expect(status.lastReconcile).toMatchObject({ reason: 'resync', result: 'drift', apply: false });
    expect(status.resources[0]).toMatchObject({ name: 'lake', syncState: 'out_of_sync', action: 'update' });
    // Which fields: live value against the manifest's, in /status and in the log.
    const field = { path: 'config.httpPath', live: '/changed/by/hand', desired: '/sql/1' };
    expect(status.resources[0].fields).toEqual([field]);
    expect(status.lastDrift).toMatchObject({ repaired: false, resources: [{ kind: 'Integration', name: 'lake', action: 'update', fields: [field] }] });
    const lines = logs.map((l) => JSON.parse(l) as { msg: string });
    expect(lines.some((l) => l.msg === 'drift detected (not applied: --self-heal is off): 1 resource differ from the manifests')).toBe(true);
    expect(lines.some((l) => l.msg === 'drift: Integration/lake: config.httpPath is "/changed/by/hand" in the service, "/sql/1" in the manifest')).toBe(true);
    expect(logs.join('')).not.toContain(GOVOPS_SECRET_LAKE_TOKEN);
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/govops_drift_detected 1/);
    expect((await api.getIntegration(live.id)).config.httpPath).toBe('/changed/by/hand');
  });

  it('the revision in force rejected at a resync (its secret gone) is not shown rejected once a resync succeeds again', async () => {
    const t = await setup();
    await writeFile(join(t.dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    const { daemon } = await t.start();
    const api = t.api();
    await until(async () => (await api.listIntegrations())[0]?.status === 'enabled');
    await daemon.loop.idle();
    const env = t.settings.env!;
    // the secret is gone (a secrets folder's file removed): the revision in force cannot be loaded at the resync
    delete env.GOVOPS_SECRET_TEST_LAKE_TOKEN;
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    let status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync', result: 'invalid' });
    expect(status.lastError).toMatchObject({ result: 'invalid', code: 'GOVOPS_INVALID_REVISION' });
    // back: the resync loads and plans it again, nothing is rejected any more
    env.GOVOPS_SECRET_TEST_LAKE_TOKEN = GOVOPS_SECRET_LAKE_TOKEN;
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync', result: 'in-sync' });
    expect(status.revision.lastGood).toBe(status.revision.latest);
    expect(status.revision.rejected).toBeUndefined();
    expect(status.lastError).toBeUndefined();
  });

  it('a new revision rejected for a secret file missing from --secrets-dir is applied at the first resync after the file is added', async () => {
    const secrets = await cleanup.tmp('govops-secrets-');
    const t = await setup({ secretScope: { envPrefix: 'GOVOPS_SECRET_', dir: secrets } });
    await writeFile(join(t.dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    const { daemon } = await t.start();
    const api = t.api();
    await until(async () => (await api.listIntegrations())[0]?.status === 'enabled');
    await daemon.loop.idle();
    // a manifest naming a secret file the operator has not put in the secrets folder (a Kubernetes Secret's key) yet
    const lake2 = lakehouse('lake2', '/sql/2', 'lake2.example.com').replace('{ fromEnv: GOVOPS_SECRET_TEST_LAKE_TOKEN }', '{ fromFile: lake2-token }');
    await t.swap('lake2.yaml', lake2);
    let status = await until(async () => {
      const s = (await getJson(`${daemon.url}/status`)).body;
      return s.revision.rejected && s.revision.rejected === s.revision.latest && !s.running ? s : undefined;
    }, 15_000, 'rejected');
    expect(status.lastError.message).toContain('cannot read secret file');
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync', result: 'in-sync' });
    expect(status.revision.rejected).toBe(status.revision.latest);
    // the operator adds the file: the next resync applies the revision (before: rejected until the next commit)
    await writeFile(join(secrets, 'lake2-token'), 'lake2-t0ken-value\n');
    daemon.loop.resyncNow();
    await until(async () => (await api.listIntegrations()).some((l) => l.config.workspaceUrl === 'https://lake2.example.com'), 15_000, 'lake2 created');
    await daemon.loop.idle();
    status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'revision', result: 'applied' });
    expect(status.revision.lastApplied).toBe(status.revision.latest);
    expect(status.revision.rejected).toBeUndefined();
  });

  it('repairs out-of-band drift with --self-heal on the periodic resync', async () => {
    const t = await setup({ selfHeal: true, resyncMs: 300 });
    await writeFile(join(t.dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    const { daemon } = await t.start();
    const api = t.api();
    await until(async () => (await api.listIntegrations())[0]?.status === 'enabled');
    const live = (await api.listIntegrations())[0]!;
    await api.updateIntegration(live.id, {
      type: 'lakehouse',
      autoBootstrap: true,
      config: { ...live.config, httpPath: '/changed/by/hand', token: GOVOPS_SECRET_LAKE_TOKEN },
    });
    await until(async () => (await api.getIntegration(live.id)).config.httpPath === '/sql/1', 15_000, 'drift repaired');
    // The repair was a resync that applied (counted as applied: the first apply plus the repair).
    await until(async () => /govops_reconcile_total\{result="applied"\} 2/.test(await (await fetch(`${daemon.url}/metrics`)).text()), 10_000, 'repair recorded');
    const status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.drift).toBe(false);
    expect(status.lastReconcile.reason).toBe('resync');
    // What was repaired stays visible.
    expect(status.lastDrift).toMatchObject({ repaired: true, resources: [{ name: 'lake', fields: [{ path: 'config.httpPath', live: '/changed/by/hand', desired: '/sql/1' }] }] });
  });

  it('drift a self-heal resync may not repair (a replace without --allow-replace) is reported as drift, as without --self-heal', async () => {
    const t = await setup({ selfHeal: true });
    const logs: string[] = [];
    const { daemon, api, live } = await lakeApplied(t, logs);
    // behind govops' back, a field the service cannot edit in place: putting it back is a replace, held back
    await editBehindGovops(t.sandbox!, live.id, { catalog: 'changed-by-hand' });
    daemon.loop.resyncNow();
    await daemon.loop.idle();
    const status = (await getJson(`${daemon.url}/status`)).body;
    expect(status.lastReconcile).toMatchObject({ reason: 'resync', apply: true, result: 'blocked' });
    expect(status.drift).toBe(true);
    expect(status.lastDrift).toMatchObject({ repaired: false, resources: [{ kind: 'Integration', name: 'lake', action: 'replace', fields: [{ path: 'config.catalog', live: 'changed-by-hand' }] }] });
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/govops_drift_detected 1/);
    const lines = logs.map((l) => JSON.parse(l) as { msg: string });
    expect(lines.some((l) => /^drift detected and not repaired \(held back/.test(l.msg))).toBe(true);
    expect((await api.getIntegration(live.id)).config.catalog).toBe('changed-by-hand');
  });

  it('stays ready while another writer (a CI apply) holds the state lock; applies the waiting revision once it is let go', async () => {
    // (a sidecar made unready takes its whole pod out of the Service: a CI job's apply must not do that)
    const t = await setup();
    await t.swap('hooks.yaml', webhook('hook1', 'https://hooks.example.com/a'));
    const { daemon } = await t.start();
    const api = t.api();
    await until(async () => (await fetch(`${daemon.url}/readyz`)).status === 200, 15_000, 'ready');
    const lock = await acquireStateLock(t.settings.statePath);
    let held = true;
    cleanup.add(() => (held ? lock.release() : undefined));
    await t.swap('hooks.yaml', [webhook('hook1', 'https://hooks.example.com/a'), webhook('hook2', 'https://hooks.example.com/b')].join('---\n'));
    const locked = await until(async () => {
      const b = (await getJson(`${daemon.url}/status`)).body;
      return b.lastError?.code === 'GOVOPS_STATE_LOCKED' ? b : undefined;
    }, 15_000, 'the reconcile meets the lock');
    expect(locked.lastError.retry).toBe('backoff');
    const ready = await getJson(`${daemon.url}/readyz`);
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
    expect(await (await fetch(`${daemon.url}/metrics`)).text()).toMatch(/govops_ready 1/);
    expect((await api.listWebhooks()).map((w) => w.name)).toEqual(['hook1']);
    held = false;
    await lock.release();
    await until(async () => ((await api.listWebhooks()).length === 2 ? true : undefined), 15_000, 'applied once the lock is let go');
    expect((await fetch(`${daemon.url}/readyz`)).status).toBe(200);
  });

  it('is not ready while the service is unreachable', async () => {
    const t = await setup({ sandbox: 'none' });
    await writeFile(join(t.dir, 'hooks.yaml'), webhook('hook1', 'https://hooks.example.com/a'));
    const { daemon } = await t.start();
    const body = await until(async () => {
      const r = await getJson(`${daemon.url}/readyz`);
      return r.status === 503 && /unreachable/.test(r.body.reason) ? r.body : undefined;
    }, 10_000, 'readyz 503 unreachable');
    expect(body.ready).toBe(false);
    expect((await fetch(`${daemon.url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).toMatch(/govops_reconcile_total\{result="unreachable"\} [1-9]/);
    expect(metrics).toMatch(/govops_ready 0/);
  });

  it('POST /hooks/git: verified → 202 and an immediate look; unverified → 401', async () => {
    const t = await setup({ intervalMs: 600_000, debounceMs: 60_000 });
    await writeFile(join(t.dir, 'hooks.yaml'), webhook('hook1', 'https://hooks.example.com/a'));
    const { daemon } = await t.start();
    await until(async () => (await fetch(`${daemon.url}/readyz`)).status === 200);
    // The watcher's debounce is a minute here: only the push notification can make it look now.
    await writeFile(join(t.dir, 'hooks2.yaml'), webhook('hook2', 'https://hooks.example.com/b'));
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const bad = await fetch(`${daemon.url}/hooks/git`, { method: 'POST', body, headers: { 'x-hub-signature-256': githubSignature('wrong', body) } });
    expect(bad.status).toBe(401);
    const none = await fetch(`${daemon.url}/hooks/git`, { method: 'POST', body });
    expect(none.status).toBe(401);
    const badGitlab = await fetch(`${daemon.url}/hooks/git`, { method: 'POST', body, headers: { 'x-gitlab-token': 'nope' } });
    expect(badGitlab.status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect((await getJson(`${daemon.url}/status`)).body.resources).toHaveLength(1);
    const ok = await fetch(`${daemon.url}/hooks/git`, {
      method: 'POST',
      body,
      headers: { 'x-hub-signature-256': githubSignature('hook-secret', body), 'x-github-event': 'push', 'content-type': 'application/json' },
    });
    expect(ok.status).toBe(202);
    await until(async () => (await getJson(`${daemon.url}/status`)).body.resources.length === 2, 10_000, 'push applied');
    const gitlab = await fetch(`${daemon.url}/hooks/git`, { method: 'POST', body, headers: { 'x-gitlab-token': 'hook-secret', 'x-gitlab-event': 'Push Hook' } });
    expect(gitlab.status).toBe(202);
  });
});

/** An out-of-band edit of a live integration's config (the sandbox's control API), as someone behind govops' back. */
async function editBehindGovops(sandbox: { url: string; adminToken: string }, id: string, config: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${sandbox.url}/_sandbox/integrations/${id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: sandbox.adminToken },
    body: JSON.stringify({ config }),
  });
  expect(r.status).toBe(200);
}

/** The daemon of `t` started on one lakehouse manifest, its create applied and its loop idle; the live integration. */
async function lakeApplied(t: Awaited<ReturnType<typeof setup>>, logs: string[]) {
  await writeFile(join(t.dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
  const { daemon } = await t.start(logs);
  const api = t.api();
  await until(async () => (await api.listIntegrations())[0]?.status === 'enabled');
  await daemon.loop.idle();
  const live = (await api.listIntegrations())[0]!;
  return { daemon, api, live };
}
