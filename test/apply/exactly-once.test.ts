/**
 * Exactly-once creation and intent recorded before acting, against a scripted service (to see the
 * state file at the moment each request arrives) and the sandbox (409s, duplicates).
 */
import { existsSync, readFileSync } from 'node:fs';
import { objectStore } from '../../bench/flaky-drill.mjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeCreate, writeUpdate, type OpContext } from '../../src/apply/integration.js';
import { ServiceClient } from '../../src/api/client.js';
import { ErrorCode } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import { journalPathFor, loadState, parseState, replayJournal, saveState } from '../../src/state/store.js';
import { webhookIdentity } from '../../src/service/kinds.js';
import type { GovopsState } from '../../src/state/types.js';
import { sendJson, startServer, type TestServer } from '../api/server.js';
import { systemClock, type Clock } from '../../src/util/clock.js';
import { WEBHOOK_CREATE_HOLD_MS } from '../../src/plan/held-create.js';
import { rig, webhookManifest, type Rig } from './inproc.js';

const passed = { status: 'passed', validationTests: [] };
const STORE = objectStore('store');

let r: Rig;
beforeEach(async () => {
  r = await rig({ transitionMs: 30 });
  r.env.GOVOPS_SECRET_HOOK_SECRET = 'hook-secret-value';
});
afterEach(async () => {
  await r.close();
});

describe('intent recorded before acting', () => {
  let server: TestServer | undefined;
  let client: ServiceClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    server = client = undefined;
  });

  it('the state file holds the pending create when the POST arrives, and the live id when the first status poll arrives', async () => {
    const seen: Record<string, GovopsState | undefined> = {};
    // What is on disk: the state file and the journal of changes appended since it was written.
    const snapshot = (): GovopsState | undefined => {
      let text: string;
      try {
        text = readFileSync(r.statePath, 'utf8');
      } catch {
        return undefined;
      }
      const journal = existsSync(journalPathFor(r.statePath)) ? readFileSync(journalPathFor(r.statePath), 'utf8') : '';
      return replayJournal(parseState(text, r.statePath), text, journal, r.statePath);
    };
    const integrations: Array<Record<string, unknown>> = [];
    server = await startServer((req, res) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, integrations);
      if (req.method === 'GET' && req.url === '/webhooks') return sendJson(res, 200, []);
      if (req.method === 'POST' && req.url === '/integrations?dryRun=true') return sendJson(res, 200, { id: '', status: 'creating', validationResults: passed });
      if (req.method === 'POST' && req.url === '/integrations') {
        seen.post = snapshot();
        integrations.push({ id: 41, status: 'creating', ...(JSON.parse(req.body) as object) });
        return sendJson(res, 200, { id: 41, status: 'creating', validationResults: passed });
      }
      if (req.method === 'GET' && req.url === '/integrations/41/status') {
        seen.poll ??= snapshot();
        return sendJson(res, 200, { id: 41, status: 'enabled' });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retries: 0, logger: silentLogger() });
    await r.write('store.yaml', STORE);
    const res = await reconcile(client, engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: {}, pollIntervalMs: 10 }));
    expect(res.ok, res.error).toBe(true);
    expect(seen.post?.resources).toEqual([
      expect.objectContaining({ kind: 'Integration', name: 'store', id: '', pending: 'create', key: 'object_store:name=store' }),
    ]);
    expect(seen.poll?.resources).toEqual([expect.objectContaining({ name: 'store', id: '41' })]);
    expect(seen.poll!.resources[0]!.pending).toBeUndefined();
  });

  it('a webhook batch whose outcome is unknown keeps its intents; the next run reconciles them name by name: the ones now live are kept, only the others sent', async () => {
    const webhooks: Array<Record<string, unknown>> = [];
    let posts = 0;
    let lists = 0;
    const bodies: string[][] = [];
    server = await startServer((req, res, { socket }) => {
      if (req.method === 'GET' && req.url === '/integrations') return sendJson(res, 200, []);
      if (req.method === 'GET' && req.url === '/webhooks') {
        lists++;
        // the client's own lookup right after the broken POST fails too: the outcome stays unknown
        if (posts === 1 && lists === 2) return sendJson(res, 503, { statusCode: 503, error: 'Service Unavailable', message: 'later' });
        return sendJson(res, 200, webhooks);
      }
      if (req.method === 'POST' && req.url === '/webhooks') {
        posts++;
        const items = (JSON.parse(req.body) as { webhooks: Array<Record<string, unknown>> }).webhooks;
        bodies.push(items.map((w) => String(w.name)));
        // the first POST creates only the first two, then the connection breaks
        const made = (posts === 1 ? items.slice(0, 2) : items).map((w) => ({ ...w, id: webhooks.length + 1 + items.indexOf(w), createdBy: 1 }));
        webhooks.push(...made);
        if (posts === 1) return void socket.destroy();
        return sendJson(res, 200, { createdWebhooks: made, errors: [] });
      }
      sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: req.url });
    });
    client = new ServiceClient({ baseUrl: server.url, token: 't', retries: 0, logger: silentLogger() });
    for (const n of ['a', 'b', 'c']) await r.write(`${n}.yaml`, webhookManifest(n));
    const opts = engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, pollIntervalMs: 10 });
    // The outcome is unknown and cannot be looked up: nothing is re-sent in this run (no layer repeats the
    // client's retries); the pending intents stay on disk.
    const first = await reconcile(client, opts);
    expect(first.ok).toBe(false);
    expect(first.outcomes.map((o) => o.code)).toEqual([ErrorCode.createUnsettled, ErrorCode.createUnsettled, ErrorCode.createUnsettled]);
    expect((await r.state()).resources.map((e) => `${e.name}:${e.pending ?? ''}`).sort()).toEqual(['a:create', 'b:create', 'c:create']);
    expect(bodies).toEqual([['a', 'b', 'c']]);
    // The next run resolves them by name: the two now live are kept. The third is not listed: within the hold
    // (WEBHOOK_CREATE_HOLD_MS, a list may lag) it is not sent again, its intent kept pending (blocked).
    const soon = await reconcile(client, opts);
    expect(soon.outcomes.map((o) => [o.name, o.result, o.code])).toEqual([['c', 'skipped', ErrorCode.blocked]]);
    expect(soon.error).toMatch(/Webhook\/c: blocked: a create of it sent at .* got no answer and the service does not list it yet/);
    expect(bodies).toEqual([['a', 'b', 'c']]);
    expect((await r.state()).resources.map((e) => `${e.name}:${e.id}:${e.pending ?? ''}`).sort()).toEqual(['a:1:', 'b:2:', 'c::create']);
    // Once the hold has passed (the clock's time of day moved on), the create is sent again: only the third.
    const later: Clock = { ...systemClock, now: () => Date.now() + WEBHOOK_CREATE_HOLD_MS };
    const res = await reconcile(client, { ...opts, clock: later });
    expect(res.ok, res.error).toBe(true);
    expect(bodies).toEqual([['a', 'b', 'c'], ['c']]);
    expect(webhooks.map((w) => w.name).sort()).toEqual(['a', 'b', 'c']);
    expect((await r.state()).resources.map((e) => `${e.name}:${e.id}`).sort()).toEqual(['a:1', 'b:2', 'c:3']);
  });
});

describe('409s', () => {
  it('409 on the dry run and on the real create while nothing with its identity exists: retried (bounded), created once', async () => {
    r.sandbox.faults.add({ type: 'conflict', method: 'POST', path: '/integrations', count: 3 });
    await r.write('store.yaml', STORE);
    const res = await r.run();
    expect(res.ok, res.error).toBe(true);
    expect(await r.api.listIntegrations()).toHaveLength(1);
    expect(r.lines().filter((l) => l.startsWith('POST /integrations?dryRun=true') && l.endsWith(' 409'))).toHaveLength(3);
    // the real create
    const body = { type: 'object_store' as const, autoBootstrap: false, config: { name: 'z', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: 's3://z', authenticationType: 'auto' } };
    r.sandbox.faults.add({ type: 'conflict', method: 'POST', path: '/integrations', count: 3 });
    r.sandbox.clearRequests();
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 10_000, initialMs: 5, maxMs: 20 } };
    const id = await writeCreate(ctx, body);
    expect(r.lines().filter((l) => l.startsWith('POST'))).toEqual([
      'POST /integrations 409', 'POST /integrations 409', 'POST /integrations 409', 'POST /integrations 200',
    ]);
    expect((await r.api.listIntegrations()).filter((i) => i.config?.name === 'z').map((i) => i.id)).toEqual([id]);
  });

  it('409 on create when another integration has its identity: GOVOPS_ALREADY_EXISTS (a lost answer of its own is the client\'s to resolve)', async () => {
    const body = { type: 'object_store' as const, autoBootstrap: false, config: { name: 'x', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: 's3://x', authenticationType: 'auto' } };
    const made = await r.api.createIntegration(body);
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 10_000, initialMs: 10, maxMs: 50 } };
    expect(made.id).not.toBe('');
    await expect(writeCreate(ctx, body)).rejects.toMatchObject({ code: ErrorCode.alreadyExists, failureClass: 'terminal' });
  });

  it('a create the service refused (409: another made it meanwhile; 422) leaves no pending intent: the next plan adopts the other\'s integration, never records it as govops\' own', async () => {
    await r.write('store.yaml', STORE);
    const body = { type: 'object_store' as const, autoBootstrap: false, config: { name: 'store', cloudAccountId: '123456789012', cloudRegion: 'eu-west-1', cloudLocationRole: 'arn:aws:iam::123456789012:role/store', cloudLocationPath: 's3://store/data', authenticationType: 'auto' } };
    // Someone else creates the same integration between govops' dry run and its real create (a race the apply reports).
    const racing = new Proxy(r.api, {
      get(t, prop, recv) {
        const v = Reflect.get(t, prop, recv) as unknown;
        if (prop !== 'createIntegration' || typeof v !== 'function') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
        return async (b: unknown, o?: { dryRun?: boolean }) => {
          if (!o?.dryRun && (await t.listIntegrations()).length === 0) await t.createIntegration(body);
          return (v as (...a: unknown[]) => unknown).call(t, b, o);
        };
      },
    });
    const run = (apply = true) =>
      reconcile(racing, engineOptions({ root: r.dir, paths: ['m'], apply, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, timeoutMs: 10_000, pollIntervalMs: 10, pollMaxIntervalMs: 50 }));
    const first = await run();
    expect(first.outcomes[0]).toMatchObject({ result: 'failed', code: ErrorCode.alreadyExists });
    expect((await r.state()).resources).toEqual([]);
    // As the failure says: the next plan adopts it (so --no-adopt would block it); govops does not count it as its own.
    const plan = await run(false);
    expect(plan.plan!.changes[0]).toMatchObject({ name: 'store', action: 'adopt', adopt: true });
  });

  it('a create refused with 422 on the real call (after a passing dry run) drops its intent: an integration made by hand afterwards is adopted, not claimed', async () => {
    await r.write('store.yaml', STORE);
    const body = { type: 'object_store' as const, autoBootstrap: false, config: { name: 'store', cloudAccountId: '123456789012', cloudRegion: 'eu-west-1', cloudLocationRole: 'arn:aws:iam::123456789012:role/store', cloudLocationPath: 's3://store/data', authenticationType: 'auto' } };
    r.sandbox.failures.tests.push({ name: '*', status: 'failed', operation: 'create' });
    // the dry run passes (answered here; the sandbox fails only the real create)
    const refusing = new Proxy(r.api, {
      get(t, prop, recv) {
        const v = Reflect.get(t, prop, recv) as unknown;
        if (prop !== 'createIntegration' || typeof v !== 'function') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
        return (b: unknown, o?: { dryRun?: boolean }) => (o?.dryRun ? Promise.resolve({ id: '', status: 'dryRun', validationResults: passed }) : (v as (...a: unknown[]) => unknown).call(t, b, o));
      },
    });
    const first = await reconcile(refusing, engineOptions({ root: r.dir, paths: ['m'], apply: true, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env, timeoutMs: 10_000, pollIntervalMs: 10, pollMaxIntervalMs: 50 }));
    expect(first.outcomes[0]).toMatchObject({ result: 'failed', code: ErrorCode.validationFailed });
    expect(r.lines().filter((l) => l.startsWith('POST'))).toEqual(['POST /integrations 422']);
    expect((await r.state()).resources).toEqual([]);
    r.sandbox.failures.tests.length = 0;
    await r.api.createIntegration(body); // made by hand, to see what is wrong
    const plan = await reconcile(r.api, engineOptions({ root: r.dir, paths: ['m'], apply: false, prune: false, allowReplace: false, logger: silentLogger(), statePath: r.statePath, env: r.env }));
    expect(plan.plan!.changes[0]).toMatchObject({ name: 'store', action: 'adopt', adopt: true });
  });

  it('409 on update that never ends: a bounded number of tries, then GOVOPS_CONFLICT_PERSISTS (transient)', async () => {
    const body = { type: 'object_store' as const, autoBootstrap: false, config: { name: 'y', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'role', cloudLocationPath: 's3://y', authenticationType: 'auto' } };
    const made = await r.api.createIntegration(body);
    r.sandbox.faults.add({ type: 'conflict', method: 'PUT', path: '/integrations/:id' });
    const ctx: OpContext = { api: r.api, poll: { clock: systemClock, deadline: Date.now() + 20_000, initialMs: 5, maxMs: 20 } };
    r.sandbox.clearRequests();
    await expect(writeUpdate(ctx, made.id, body)).rejects.toMatchObject({ code: ErrorCode.conflictPersists, failureClass: 'transient' });
    expect(r.lines().filter((l) => l.startsWith('PUT'))).toHaveLength(6);
  });
});

describe('duplicate webhooks', () => {
  it('a second live webhook with a managed name that govops did not create: reported, never deleted, even with --prune', async () => {
    await r.write('hook.yaml', webhookManifest('hook'));
    expect((await r.run()).ok).toBe(true);
    const recorded = (await r.state()).resources[0]!.id;
    const copy = (await r.api.createWebhooks([{ url: 'https://hooks.example.com/hook', name: 'hook', global: false, notificationType: ['modelCreated'], actionType: 'triggered' }])).createdWebhooks[0]!;
    const plan = await r.run({ apply: false });
    expect(plan.plan!.warnings.map((w) => w.message).join('\n')).toMatch(new RegExp(`another live webhook has this name \\(id ${copy.id}\\); govops did not create it and never deletes it \\(govops keeps id ${recorded}`));
    expect(plan.changed).toBe(false);
    const pruned = await r.run({ prune: true });
    expect(pruned.ok, pruned.error).toBe(true);
    expect(pruned.outcomes).toEqual([]);
    expect((await r.api.listWebhooks()).map((w) => w.id).sort()).toEqual([recorded, copy.id].sort());
    expect((await r.state()).resources.map((e) => e.id)).toEqual([recorded]);
  });

  it("copies govops' own interrupted create made (recorded with its identity) are deleted with --prune, the lowest id kept", async () => {
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated'], false));
    const item = { url: 'https://hooks.example.com/hook', name: 'hook', global: false, notificationType: ['modelCreated'], actionType: 'triggered' as const };
    // a create sent twice whose answers were lost: two live webhooks, state holding only the intent
    const made = (await r.api.createWebhooks([item, item])).createdWebhooks.map((w) => w.id);
    const fresh = await loadState(r.statePath);
    await saveState(r.statePath, {
      ...fresh,
      resources: [{ kind: 'Webhook', name: 'hook', id: '', origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: new Date(0).toISOString(), pending: 'create', key: 'hook', identity: webhookIdentity('hook', item.url) }],
    });
    const pruned = await r.run({ prune: true });
    expect(pruned.ok, pruned.error).toBe(true);
    expect(pruned.outcomes).toEqual([expect.objectContaining({ name: 'hook', action: 'delete', result: 'ok', duplicateOf: made[0] })]);
    expect((await r.api.listWebhooks()).map((w) => w.id)).toEqual([made[0]]);
    expect(r.lines()).toContain(`DELETE /webhooks/${made[1]} 200`);
  });
});

describe('a lost answer to a webhook batch', () => {
  it('a replace whose create answer is lost records the new webhook, never the one it replaces', async () => {
    await r.write('hook.yaml', webhookManifest('hook'));
    expect((await r.run()).ok).toBe(true);
    const old = (await r.state()).resources[0]!.id;
    // A new URL is a replace (no update endpoint); from now on every create is carried out and answered 503 (a
    // gateway that gave up): its answer is lost, and the client looks for it by name among the live webhooks.
    r.sandbox.setBehaviours(['503-after-success']);
    await r.write('hook.yaml', webhookManifest('hook').replace('https://hooks.example.com/hook', 'https://hooks.example.com/v2/hook'));
    const res = await r.run({ allowReplace: true });
    expect(res.ok, res.error).toBe(true);
    expect(res.outcomes).toEqual([expect.objectContaining({ name: 'hook', action: 'replace', result: 'ok' })]);
    const live = await r.api.listWebhooks();
    expect(live).toHaveLength(1);
    expect(live[0]!.url).toBe('https://hooks.example.com/v2/hook');
    expect(live[0]!.id).not.toBe(old);
    expect((await r.state()).resources.map((e) => e.id)).toEqual([live[0]!.id]);
  });
});
