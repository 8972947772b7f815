/**
 * The end-to-end scenario under every server behaviour: apply -> plan no-op -> edit -> rotate a secret ->
 * out-of-band drift -> prune. A plan is a promise: after each apply, the next plan has nothing to do,
 * whatever the service echoes (defaults filled or omitted, extra fields, ids as numbers or strings,
 * credentials masked or omitted, lists in any order, validation warnings, transitions skipped).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/types.js';
import { BEHAVIOUR_SETS, MANIFESTS, SECRETS, label, world, writesOf, type World } from './helpers.js';

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const acting = (plan: Plan | undefined) => (plan?.changes ?? []).filter((c) => c.action !== 'noop');
const summaryOfChanges = (plan: Plan | undefined) => {
  const s = plan!.summary;
  return { create: s.create, update: s.update, replace: s.replace, delete: s.delete };
};
const NONE = { create: 0, update: 0, replace: 0, delete: 0 };

describe.each(BEHAVIOUR_SETS.map((set) => ({ set, name: label(set) })))('scenario under behaviour $name', ({ set }) => {
  it('apply, no-op plan, edit, rotate, drift, prune', async () => {
    w = await world(set);
    Object.assign(w.env, SECRETS);
    for (const [file, text] of Object.entries(MANIFESTS)) await w.write(file, text);

    // 1. apply everything
    const first = await w.run();
    expect(first.ok, first.error).toBe(true);
    expect(summaryOfChanges(first.plan)).toEqual({ ...NONE, create: 5 });

    // 2. the next plan is a no-op (no false drift), and so is a plan without the state file
    w.sandbox.clearRequests();
    const again = await w.run({ apply: false });
    expect(acting(again.plan), JSON.stringify(acting(again.plan), null, 1)).toEqual([]);
    expect(again.changed).toBe(false);
    const stateless = await w.run({ apply: false, statePath: `${w.dir}/none/state.json` });
    expect(summaryOfChanges(stateless.plan)).toEqual(NONE);
    expect(stateless.plan!.changes.every((c) => c.action === 'adopt' && c.changes.length === 0)).toBe(true);
    expect(stateless.plan!.changes.find((c) => c.name === 'sql')!.notComparable).toEqual({
      paths: ['config.password', 'config.username'],
      handling: 'record',
    });
    expect(stateless.plan!.changes.find((c) => c.name === 'alerts')!.notComparable).toEqual({ paths: ['secret'], handling: 'record' });
    expect(writesOf(w.sandbox)).toEqual([]);

    // 3. an edit: exactly that field, then nothing
    await w.write('lake.yaml', MANIFESTS['lake.yaml']!.replace('/sql/1', '/sql/2'));
    const edit = await w.run();
    expect(edit.ok, edit.error).toBe(true);
    expect(acting(edit.plan).map((c) => [c.name, c.action, c.changes.map((f) => f.path)])).toEqual([['lake', 'update', ['config.httpPath']]]);
    expect((await w.run({ apply: false })).changed).toBe(false);

    // 4. a rotated secret: one sensitive update, then nothing
    w.env.GOVOPS_SECRET_SQL_PASSWORD = 'pw-two';
    const rotate = await w.run();
    expect(rotate.ok, rotate.error).toBe(true);
    expect(acting(rotate.plan).map((c) => [c.name, c.action, c.changes])).toEqual([
      ['sql', 'update', [{ path: 'config.password', sensitive: true, forcesReplace: false }]],
    ]);
    expect((await w.run({ apply: false })).changed).toBe(false);

    // 5. out-of-band drift (someone edits the service): seen, repaired, then nothing
    const sqlId = (await w.state()).resources.find((r) => r.name === 'sql')!.id;
    const drift = await fetch(`${w.sandbox.url}/_sandbox/integrations/${sqlId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: w.sandbox.adminToken },
      body: JSON.stringify({ config: { port: 1533, impersonation: { enabled: true } } }),
    });
    expect(drift.status).toBe(200);
    const repair = await w.run();
    expect(repair.ok, repair.error).toBe(true);
    expect(acting(repair.plan).map((c) => [c.name, c.action, c.changes.map((f) => [f.path, f.before, f.after])])).toEqual([
      ['sql', 'update', [['config.impersonation.enabled', true, false], ['config.port', 1533, 1433]]],
    ]);
    expect((await w.run({ apply: false })).changed).toBe(false);

    // 6. prune: only with --prune, only what govops owns (a stranger stays), then nothing
    const stranger = await w.api.createIntegration({
      type: 'lakehouse',
      autoBootstrap: true,
      config: { workspaceUrl: 'https://stranger.example.com', httpPath: '/x', token: 't' },
    });
    await w.remove('lake.yaml');
    await w.remove('hooks.yaml');
    w.sandbox.clearRequests();
    const noPrune = await w.run();
    expect(noPrune.ok, noPrune.error).toBe(true);
    expect(writesOf(w.sandbox)).toEqual([]);
    const pruned = await w.run({ prune: true, maxDeletes: 2 }); // 2 of 5 managed: over the default 25% guard
    expect(pruned.ok, pruned.error).toBe(true);
    expect(acting(pruned.plan).map((c) => [c.resourceKind, c.name, c.action]).sort()).toEqual([
      ['Integration', 'lake', 'delete'],
      ['Webhook', 'alerts', 'delete'],
    ]);
    const left = (await w.api.listIntegrations()).map((i) => i.id);
    expect(left).toContain(stranger.id);
    expect(left).toHaveLength(4);
    expect(await w.api.listWebhooks()).toEqual([]);
    const final = await w.run({ apply: false, prune: true });
    expect(acting(final.plan)).toEqual([]);
  });
});
