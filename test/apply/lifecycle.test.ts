import { readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderText } from '../../src/plan/render-text.js';
import { rig, sqlManifest, lakeManifest, webhookManifest, type Rig } from './inproc.js';

let r: Rig;
const SECRETS = { GOVOPS_SECRET_SQL_PASSWORD: 'pw-AAAA-1111', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-BBBB-2222', GOVOPS_SECRET_LAKE_TOKEN: 'tok-CCCC-3333', GOVOPS_SECRET_HOOK_SECRET: 'hook-DDDD-4444' };
beforeEach(async () => {
  r = await rig();
  Object.assign(r.env, SECRETS);
});
afterEach(async () => {
  await r.close();
});

const writes = (): string[] => r.lines().filter((l) => !l.startsWith('GET'));

describe('apply lifecycle (sandbox over HTTP)', () => {
  it('secret rotation: an update with a (sensitive) change, then no changes; no secret anywhere', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    await r.write('w.yaml', webhookManifest('hook'));
    expect((await r.run()).ok).toBe(true);
    r.env.GOVOPS_SECRET_SQL_PASSWORD = 'pw-rotated-5555';
    const plan = await r.run({ apply: false });
    expect(plan.plan!.changes.find((c) => c.name === 'sql')).toMatchObject({
      action: 'update',
      changes: [{ path: 'config.password', sensitive: true, forcesReplace: false }],
    });
    const text = renderText(plan.plan!);
    expect(text).toMatch(/~ config\.password = \(sensitive\)/);
    r.sandbox.clearRequests();
    const applied = await r.run();
    expect(applied.ok).toBe(true);
    expect(writes()).toEqual(['PUT /integrations/1?dryRun=true 200', 'PUT /integrations/1 200']);
    r.sandbox.clearRequests();
    const after = await r.run({ apply: false });
    expect(after.changed).toBe(false);
    expect(r.lines().sort()).toEqual(['GET /integrations 200', 'GET /webhooks 200']);

    const everything = [await readFile(r.statePath, 'utf8'), ...r.logs, text, JSON.stringify([plan, applied, after])].join('\n');
    for (const v of [...Object.values(SECRETS), 'pw-rotated-5555']) expect(everything).not.toContain(v);
  });

  it('adoption: a matching live integration not in state is adopted without a call (credentials not comparable), never re-created', async () => {
    const made = await r.api.createIntegration({
      type: 'lakehouse',
      autoBootstrap: true,
      config: { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 'whatever' },
    });
    r.sandbox.finishTransitions(); // enabled now, not after some real time
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    const plan = await r.run({ apply: false });
    expect(plan.plan!.changes[0]).toMatchObject({
      action: 'adopt',
      adopt: true,
      liveId: made.id,
      changes: [],
      notComparable: { paths: ['config.token'], handling: 'record' },
    });
    expect(plan.plan!.summary).toMatchObject({ adopt: 1, update: 0 });
    r.sandbox.clearRequests();
    const applied = await r.run();
    expect(applied.ok).toBe(true);
    expect(applied.outcomes[0]!.action).toBe('adopt');
    expect(writes()).toEqual([]);
    const st = await r.state();
    expect(st.resources[0]).toMatchObject({ name: 'lake', id: made.id, origin: 'adopted' });
    expect((await r.api.listIntegrations())).toHaveLength(1);
    expect((await r.run({ apply: false })).changed).toBe(false);
  });

  it('adoption with --resend-secrets: the credentials that cannot be compared are sent once (adopt + update)', async () => {
    const made = await r.api.createIntegration({
      type: 'lakehouse',
      autoBootstrap: true,
      config: { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 'whatever' },
    });
    r.sandbox.finishTransitions(); // enabled now, not after some real time
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    r.sandbox.clearRequests();
    const applied = await r.run({ resendSecrets: true });
    expect(applied.ok).toBe(true);
    expect(applied.plan!.changes[0]).toMatchObject({ action: 'update', adopt: true, notComparable: { handling: 'resend' } });
    expect(applied.outcomes[0]!.action).toBe('adopt+update');
    expect(writes()).toEqual([`PUT /integrations/${made.id}?dryRun=true 200`, `PUT /integrations/${made.id} 200`]);
    expect((await r.run({ apply: false })).changed).toBe(false);
  });

  it('prune safety: only owned resources are deleted, with --prune; the delete is dry-run first and polled to 404', async () => {
    const stranger = await r.api.createIntegration({
      type: 'lakehouse',
      autoBootstrap: true,
      config: { workspaceUrl: 'https://stranger.example.com', httpPath: '/x', token: 't' },
    });
    // the manual-flow integration's scripts are trusted to have run (the gate has its own tests: manual-steps)
    const manualSteps = 'trust';
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { autoBootstrap: false, deleteCreds: false }));
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    expect((await r.run({ manualSteps })).ok).toBe(true);
    await r.remove('a.yaml');
    await r.remove('b.yaml');
    const noPrune = await r.run({ manualSteps });
    expect(noPrune.outcomes).toEqual([]);
    expect(noPrune.plan!.warnings.map((w) => w.message).join('\n')).toMatch(/Integration\/lake .*--prune/);
    const ids = (await r.state()).resources.map((x) => x.id).sort();
    r.sandbox.clearRequests();
    // Every manifest removed: refused by the mass-deletion guard unless asked for explicitly.
    const refused = await r.run({ prune: true, manualSteps });
    expect(refused.plan!.deletionRefusal).toMatchObject({ rule: 'empty', refused: 2 });
    expect(refused.plan!.deletionRefusal!.message).toMatch(/run with --allow-empty --max-deletes 2/);
    expect(writes()).toEqual([]);
    const pruned = await r.run({ prune: true, allowEmpty: true, maxDeletes: 2, manualSteps });
    expect(pruned.ok).toBe(true);
    expect(pruned.outcomes.map((o) => `${o.name}:${o.action}:${o.result}`).sort()).toEqual(['lake:delete:ok', 'sql:delete:ok']);
    for (const id of ids) {
      expect(writes()).toContain(`DELETE /integrations/${id}?dryRun=true 200`);
      expect(writes()).toContain(`DELETE /integrations/${id} 200`);
      expect(r.lines()).toContain(`GET /integrations/${id}/status 404`);
    }
    const left = await r.api.listIntegrations();
    expect(left.map((l) => l.id)).toEqual([stranger.id]);
    expect((await r.state()).resources).toEqual([]);
  });

  it('--max-deletes: the deletes over it are refused (the rest is applied) with a message naming the flag', async () => {
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    await r.write('w.yaml', webhookManifest('hook'));
    await r.write('c.yaml', webhookManifest('keep'));
    expect((await r.run()).ok).toBe(true);
    await r.remove('b.yaml');
    await r.remove('w.yaml');
    await r.write('d.yaml', webhookManifest('new'));
    r.sandbox.clearRequests();
    const res = await r.run({ prune: true, maxDeletes: 1 });
    expect(res).toMatchObject({ ok: false, stage: 'apply' });
    expect(res.plan!.deletionRefusal).toMatchObject({ rule: 'max-deletes', refused: 2, limit: 1 });
    expect(res.plan!.deletionRefusal!.message).toMatch(/more than --max-deletes 1.*run with --max-deletes 2/);
    expect(res.outcomes.map((o) => `${o.name}:${o.result}:${o.code ?? ''}`).sort()).toEqual([
      'hook:skipped:GOVOPS_BLOCKED',
      'lake:skipped:GOVOPS_BLOCKED',
      'new:ok:',
    ]);
    expect(writes()).toEqual(['POST /webhooks 200']);
    expect((await r.run({ prune: true, maxDeletes: 2 })).ok).toBe(true);
    expect((await r.api.listWebhooks()).map((w) => w.name).sort()).toEqual(['keep', 'new']);
  });

  it('replace: blocked without --allow-replace; with it, delete (with the 2.9 payload) then create', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { database: 'other' }));
    r.sandbox.clearRequests();
    const blocked = await r.run();
    expect(blocked.ok).toBe(false);
    expect(blocked.outcomes[0]).toMatchObject({ action: 'replace', result: 'skipped' });
    expect(blocked.outcomes[0]!.error).toMatch(/--allow-replace/);
    expect(writes()).toEqual([]);
    const replaced = await r.run({ allowReplace: true });
    expect(replaced.ok).toBe(true);
    expect(writes()).toEqual([
      'DELETE /integrations/1?dryRun=true 200',
      'DELETE /integrations/1 200',
      'POST /integrations?dryRun=true 200',
      'POST /integrations 200',
    ]);
    const live = await r.api.listIntegrations();
    expect(live.map((l) => [l.id, l.config.database, l.status])).toEqual([['2', 'other', 'enabled']]);
    expect((await r.state()).resources[0]).toMatchObject({ id: '2', origin: 'created' });
  });

  it('replace to another host whose create the service refuses: its dry run comes before the delete, the old integration is kept', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('a.yaml', sqlManifest('sql', 'db.invalid')); // the Basic Connection Test fails (422)
    r.sandbox.clearRequests();
    const res = await r.run({ allowReplace: true });
    expect(res.ok).toBe(false);
    expect(res.outcomes[0]).toMatchObject({ action: 'replace', result: 'failed', code: 'GOVOPS_VALIDATION_FAILED' });
    expect(res.outcomes[0]!.error).toMatch(/integration 1 not deleted/);
    expect(res.outcomes[0]!.validation?.some((t) => t.status === 'failed')).toBe(true);
    expect(writes()).toEqual(['POST /integrations?dryRun=true 422']);
    expect((await r.api.listIntegrations()).map((l) => [l.id, l.config.host, l.status])).toEqual([['1', 'db.example.com', 'enabled']]);
    expect((await r.state()).resources.map((x) => [x.name, x.id])).toEqual([['sql', '1']]);
  });

  it('replace on the same host whose create fails after the delete: the outcome says the old integration was deleted', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { database: 'other' }));
    r.sandbox.failures.tests.push({ name: '*', status: 'failed', operation: 'create' });
    r.sandbox.clearRequests();
    const res = await r.run({ allowReplace: true });
    expect(res.outcomes[0]).toMatchObject({ action: 'replace', result: 'failed', code: 'GOVOPS_VALIDATION_FAILED' });
    expect(res.outcomes[0]!.error).toMatch(/^integration 1 was deleted; its replacement failed: create \(dry run\) failed validation \(422\)/);
    expect(writes()).toEqual(['DELETE /integrations/1?dryRun=true 200', 'DELETE /integrations/1 200', 'POST /integrations?dryRun=true 422']);
    expect((await r.state()).resources).toEqual([]);
  });

  it('webhooks: created in one batch, a change is delete + create, prune deletes by id', async () => {
    await r.write('w1.yaml', webhookManifest('one'));
    await r.write('w2.yaml', webhookManifest('two', ['modelCreated'], false));
    expect((await r.run()).ok).toBe(true);
    expect(writes().map((l) => l.replace(/ \d+$/, ''))).toEqual(['POST /webhooks']);
    const before = await r.api.listWebhooks();
    const one = before.find((w) => w.name === 'one')!;
    await r.write('w1.yaml', webhookManifest('one', ['modelCreated', 'modelDeleted']));
    r.sandbox.clearRequests();
    const res = await r.run();
    expect(res.ok).toBe(true);
    expect(res.outcomes.map((o) => o.action)).toEqual(['replace']);
    expect(writes().map((l) => l.replace(/ \d+$/, ''))).toEqual([`DELETE /webhooks/${one.id}`, 'POST /webhooks']);
    const after = await r.api.listWebhooks();
    expect(after.find((w) => w.name === 'one')!.notificationType.sort()).toEqual(['modelCreated', 'modelDeleted']);
    await r.remove('w2.yaml');
    const two = after.find((w) => w.name === 'two')!;
    r.sandbox.clearRequests();
    expect((await r.run({ prune: true })).ok).toBe(true);
    expect(writes().map((l) => l.replace(/ \d+$/, ''))).toEqual([`DELETE /webhooks/${two.id}`]);
    expect((await r.run({ apply: false })).changed).toBe(false);
  });

  it('a webhook replace whose create the service refuses after the delete: the outcome says the old webhook was deleted; the next apply creates it', async () => {
    await r.write('w1.yaml', webhookManifest('one'));
    expect((await r.run()).ok).toBe(true);
    const [one] = await r.api.listWebhooks();
    await r.write('w1.yaml', webhookManifest('one', ['modelCreated', 'modelDeleted']));
    r.sandbox.faults.add({ type: 'error', status: 400, method: 'POST', path: '/webhooks', count: 1 });
    const res = await r.run();
    expect(res.outcomes[0]).toMatchObject({ action: 'replace', result: 'failed', code: 'GOVOPS_API_BAD_REQUEST', failureClass: 'terminal' });
    expect(res.outcomes[0]!.error).toMatch(new RegExp(`^webhook ${one!.id} was deleted; its replacement failed: `));
    expect(await r.api.listWebhooks()).toEqual([]);
    expect((await r.run()).outcomes[0]).toMatchObject({ action: 'create', result: 'ok' });
  });

  it('a renamed manifest keeps its resource (state entry renamed, no API write)', async () => {
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('b.yaml', lakeManifest('lake-renamed', 'lake.example.com'));
    r.sandbox.clearRequests();
    const res = await r.run({ prune: true });
    expect(res.outcomes.map((o) => `${o.name}:${o.action}:${o.result}`)).toEqual(['lake-renamed:rename:ok']);
    expect(writes()).toEqual([]);
    expect((await r.state()).resources.map((x) => x.name)).toEqual(['lake-renamed']);
  });

  it('govops/delete annotation deletes an autoBootstrap-true integration with its deleteCredentials', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { annotations: '    govops/delete: "true"' }));
    const res = await r.run({ prune: true });
    expect(res.ok).toBe(true);
    expect(res.outcomes[0]).toMatchObject({ action: 'delete', result: 'ok' });
    expect(await r.api.listIntegrations()).toEqual([]);
  });

  it('invalid manifests or a missing secret: stage load, nothing requested', async () => {
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com'));
    delete r.env.GOVOPS_SECRET_SQL_PASSWORD;
    const res = await r.run();
    expect(res).toMatchObject({ ok: false, stage: 'load' });
    expect(res.error).toMatch(/a\.yaml:\d+:\d+: .*GOVOPS_SECRET_SQL_PASSWORD/);
    expect(r.lines()).toEqual([]);
  });
});
