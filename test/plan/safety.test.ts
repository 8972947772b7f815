/**
 * The planner's safety rules: the mass-deletion guard, duplicate webhooks, and intents left in the
 * state by an interrupted run (resolved against live state before planning).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolvePending } from '../../src/plan/pending.js';
import { actionable } from '../../src/plan/planner.js';
import { toPlanChange, type DesiredResource, type Plan } from '../../src/plan/types.js';
import { webhookIdentity } from '../../src/service/kinds.js';
import type { GovopsState, ManagedResource } from '../../src/state/types.js';
import type { LiveWebhook } from '../../src/api/types.js';
import { integration, planner, liveOf, liveWebhookOf, owned, sqlConfig, stateWith, webhook } from './fixtures.js';

const plan = planner({ prune: true, allowReplace: false });

/** n webhooks, all live and owned. */
function hooks(n: number) {
  const desired = Array.from({ length: n }, (_, i) => webhook(`h${i}`));
  return {
    desired,
    live: desired.map((d, i) => liveWebhookOf(d, String(i + 1))),
    state: stateWith(...desired.map((d, i) => owned(d, String(i + 1)))),
  };
}

const deletes = (p: Plan) => p.changes.filter((c) => c.action === 'delete' && !c.blocked).map((c) => c.name);

describe('mass-deletion guard (on by default)', () => {
  it('an empty manifest set never prunes; the message names --allow-empty and --max-deletes', () => {
    const h = hooks(3);
    const p = plan([], { webhooks: h.live }, h.state);
    expect(p.errors).toEqual([]);
    expect(deletes(p)).toEqual([]);
    expect(p.deletionRefusal).toMatchObject({ rule: 'empty', refused: 3, managed: 3 });
    expect(p.deletionRefusal!.message).toMatch(/manifest set is empty.*--allow-empty --max-deletes 3/);
    expect(p.warnings.map((w) => w.message)).toContain(p.deletionRefusal!.message);
    // --allow-empty alone still meets the share rule; with the limit raised, everything goes.
    expect(plan([], { webhooks: h.live }, h.state, { allowEmpty: true }).deletionRefusal?.rule).toBe('share');
    expect(deletes(plan([], { webhooks: h.live }, h.state, { allowEmpty: true, maxDeletes: 3 }))).toEqual(['h0', 'h1', 'h2']);
  });

  it('more than 25% of the managed resources is refused; the rest of the plan stays', () => {
    const h = hooks(8);
    const extra = webhook('new');
    // 3 of 8 removed (> 2 = 25%), one added
    const p = plan([...h.desired.slice(3), extra], { webhooks: h.live }, h.state);
    expect(p.deletionRefusal).toMatchObject({ rule: 'share', refused: 3, managed: 8, limit: 2 });
    expect(p.deletionRefusal!.message).toMatch(/deletes 3 of 8 managed resources.*run with --max-deletes 3/);
    expect(deletes(p)).toEqual([]);
    expect(actionable(p).filter((c) => !c.blocked?.message).map((c) => `${c.action} ${c.name}`)).toEqual(['create new']);
    // 2 of 8 is within the share
    expect(deletes(plan(h.desired.slice(2), { webhooks: h.live }, h.state))).toEqual(['h0', 'h1']);
  });

  it('one delete is always within the default share, and --max-deletes replaces the share', () => {
    const h = hooks(2);
    expect(deletes(plan(h.desired.slice(1), { webhooks: h.live }, h.state))).toEqual(['h0']);
    expect(plan(h.desired.slice(1), { webhooks: h.live }, h.state, { maxDeletes: 0 }).deletionRefusal?.rule).toBe('max-deletes');
    const big = hooks(8);
    expect(deletes(plan(big.desired.slice(6), { webhooks: big.live }, big.state, { maxDeletes: 6 }))).toHaveLength(6);
  });

  it('forgetting entries already gone from the service is not a deletion', () => {
    const h = hooks(4);
    const p = plan(h.desired.slice(3), { webhooks: h.live.slice(3) }, h.state);
    expect(p.deletionRefusal).toBeUndefined();
    expect(p.changes.filter((c) => c.action === 'delete' && c.goneFromService)).toHaveLength(3);
  });
});

describe('duplicate webhooks', () => {
  it('a same-name webhook govops did not create is reported and never deleted, with or without --prune', () => {
    const d = webhook('hook');
    const kept = liveWebhookOf(d, '5');
    const sameUrl = liveWebhookOf(d, '9'); // made by someone else with the same token
    const otherUrl = { ...liveWebhookOf(d, '10'), url: 'https://other-team.example.com/x' };
    const otherUser = { ...liveWebhookOf(d, '11'), createdBy: 2 };
    const st = stateWith(owned(d, '5'));
    for (const prune of [false, true]) {
      const p = plan([d], { webhooks: [kept, sameUrl, otherUrl, otherUser] }, st, { prune });
      expect(p.warnings.map((w) => w.message).join('\n')).toMatch(/Webhook\/hook: 3 other live webhooks have this name \(ids 9, 10, 11\); govops did not create them and never deletes them/);
      expect(actionable(p)).toEqual([]);
      expect(p.summary.delete).toBe(0);
    }
  });

  it("the copies state records as govops' own (an interrupted create's) are deleted with --prune, the recorded one kept", () => {
    const d = webhook('hook');
    const kept = liveWebhookOf(d, '5');
    const copy = liveWebhookOf(d, '9');
    const st = stateWith({ ...owned(d, '5'), copies: ['9'] });
    const warn = plan([d], { webhooks: [kept, copy] }, st, { prune: false });
    expect(warn.warnings.map((w) => w.message).join('\n')).toMatch(/Webhook\/hook: govops' own create left a copy \(id 9\); govops keeps id 5.*--prune/);
    expect(actionable(warn)).toEqual([]);
    const p = plan([d], { webhooks: [copy, kept, { ...liveWebhookOf(d, '12'), createdBy: 2 }] }, st);
    const dup = p.changes.filter((c) => c.duplicateOf !== undefined);
    expect(dup).toEqual([expect.objectContaining({ action: 'delete', name: 'hook', liveId: '9', duplicateOf: '5' })]);
    expect(p.changes.find((c) => c.duplicateOf === undefined)).toMatchObject({ action: 'noop', liveId: '5' });
    expect(p.summary.delete).toBe(1);
    expect(p.warnings.map((w) => w.message).join('\n')).toMatch(/another live webhook has this name \(id 12\)/);
  });

  it('a webhook with the same name owned by another entry, or a name govops does not manage, is no duplicate', () => {
    const d = webhook('hook');
    const stranger = { ...liveWebhookOf(webhook('other'), '7') };
    const p = plan([d], { webhooks: [liveWebhookOf(d, '5'), stranger] }, stateWith(owned(d, '5')));
    expect(p.changes.filter((c) => c.duplicateOf !== undefined)).toEqual([]);
  });
});

describe('intents left by an interrupted run', () => {
  const sql = integration('sql', 'sql_analytics', sqlConfig('db.example.com'));
  const pendingCreate = (d: DesiredResource, key: string, id = ''): ManagedResource => ({ ...owned(d as never, id), pending: 'create', key });

  it('a pending create without an id is found by natural key and recorded; not found, the entry goes', () => {
    const live = liveOf(sql, '12');
    const st = stateWith(pendingCreate(sql, 'sql_analytics:host=db.example.com'));
    const found = resolvePending(st, { integrations: [live], webhooks: [] });
    expect(found.state.resources).toEqual([expect.objectContaining({ name: 'sql', id: '12' })]);
    expect(found.state.resources[0]!.pending).toBeUndefined();
    expect(resolvePending(st, { integrations: [], webhooks: [] }).state.resources).toEqual([]);
    // the plan sees it as owned: no adoption, no create
    expect(plan([sql], { integrations: [live] }, st).changes[0]).toMatchObject({ action: 'noop', adopt: false, liveId: '12' });
  });

  it('a data source an interrupted delete left soft-deleted keeps its intent, and is never what another pending create at its freed prefix made', () => {
    const entry = (name: string, id: string, extra: Partial<ManagedResource>): ManagedResource =>
      ({ kind: 'DataSource', name, id, origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: '2026-01-01T00:00:00.000Z', ...extra });
    const st = stateWith(
      entry('old', '5', { pending: 'delete', identity: '7|s3://raw/a' }),
      entry('new', '', { pending: 'create', key: '7|s3://raw/a' }),
    );
    const dataSources = [
      { id: '5', integrationId: '7', dataSourceName: 'a', prefix: 's3://raw/a', softDeleted: true as const },
      { id: '9', integrationId: '7', dataSourceName: 'b', prefix: 's3://raw/a' },
    ];
    const resolved = resolvePending(st, { integrations: [], webhooks: [], dataSources });
    expect(resolved.state.resources).toEqual([expect.objectContaining({ name: 'old', id: '5', pending: 'delete' }), expect.objectContaining({ name: 'new', id: '9' })]);
    expect(resolved.state.resources[1]!.pending).toBeUndefined();
  });

  it('a live integration of a type govops does not know is never the one a pending create made (and nothing throws)', () => {
    const unknown = { ...liveOf(sql, '13'), type: 'graph_database' };
    const st = stateWith(pendingCreate(sql, 'sql_analytics:host=db.example.com'));
    expect(resolvePending(st, { integrations: [unknown], webhooks: [] }).state.resources).toEqual([]);
    const live = liveOf(sql, '12');
    expect(resolvePending(st, { integrations: [unknown, live], webhooks: [] }).state.resources).toEqual([expect.objectContaining({ name: 'sql', id: '12' })]);
    expect(plan([sql], { integrations: [unknown] }, st).changes[0]).toMatchObject({ action: 'create' });
  });

  it('a pending webhook create claims one live webhook by its identity (the lowest id); its other copies by the same creator are recorded', () => {
    const a = webhook('a');
    const b = webhook('b');
    const intent = { ...pendingCreate(b, 'b'), identity: webhookIdentity(b.body.name, b.body.url) };
    const st2 = stateWith(owned(a, '3'), intent);
    const hooks = [
      liveWebhookOf(a, '3'),
      liveWebhookOf(b, '11'),
      liveWebhookOf(b, '8'),
      { ...liveWebhookOf(b, '9'), createdBy: 2 }, // another user's
      { ...liveWebhookOf(b, '7'), url: 'https://elsewhere.example.com/b' }, // another URL
    ];
    const res = resolvePending(st2, { integrations: [], webhooks: hooks });
    expect(res.state.resources.map((r) => `${r.name}:${r.id}:${(r.copies ?? []).join('+')}`).sort()).toEqual(['a:3:', 'b:8:11']);
    // its own copy is a duplicate for the planner; the others are only reported
    const p = plan([a, b], { webhooks: hooks }, st2);
    expect(p.changes.filter((c) => c.duplicateOf).map((c) => `${c.liveId}->${c.duplicateOf}`)).toEqual(['11->8']);
    expect(p.warnings.map((w) => w.message).join('\n')).toMatch(/Webhook\/b: 2 other live webhooks have this name \(ids 9, 7\)/);
    // an intent without an identity (written by an older govops) records no copies: nothing is deleted
    const old = plan([a, b], { webhooks: hooks }, stateWith(owned(a, '3'), pendingCreate(b, 'b')));
    expect(old.changes.filter((c) => c.duplicateOf)).toEqual([]);
  });

  it('a pending create with its id: live → settled entry; a pending delete: live → kept, gone → removed', () => {
    const live = liveOf(sql, '4');
    expect(resolvePending(stateWith(pendingCreate(sql, 'k', '4')), { integrations: [live], webhooks: [] }).state.resources[0]).toMatchObject({ id: '4' });
    const del: ManagedResource = { ...owned(sql, '4'), pending: 'delete' };
    const kept = resolvePending(stateWith(del), { integrations: [live], webhooks: [] });
    expect(kept.state.resources).toHaveLength(1);
    expect(kept.state.resources[0]!.pending).toBeUndefined();
    expect(resolvePending(stateWith(del), { integrations: [], webhooks: [] }).state.resources).toEqual([]);
  });
});

describe('intents left by an interrupted run, at scale', () => {
  /** The resolution as first written: a scan of the live webhooks for each pending entry (quadratic). */
  function resolveByScan(state: GovopsState, webhooks: readonly LiveWebhook[]): ManagedResource[] {
    const refs = webhooks.map((l) => ({ id: l.id, key: l.name, identity: webhookIdentity(l.name, l.url), createdBy: l.createdBy }));
    const numeric = (a: { id: string }, b: { id: string }) => {
      const na = Number(a.id);
      const nb = Number(b.id);
      if (Number.isFinite(na) && Number.isFinite(nb) && na !== nb) return na - nb;
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    };
    const claimed = new Set(state.resources.filter((r) => !r.pending && r.id !== '').map((r) => r.id));
    const out: ManagedResource[] = [];
    for (const r of state.resources) {
      if (!r.pending) {
        out.push(r);
        continue;
      }
      const { pending, ...entry } = r;
      const isLive = r.id !== '' && refs.some((l) => l.id === r.id);
      if (pending === 'delete') {
        if (isLive) out.push(entry);
        continue;
      }
      if (isLive) {
        claimed.add(r.id);
        out.push(entry);
        continue;
      }
      const byIdentity = r.identity !== undefined;
      const found = r.key === undefined ? [] : refs.filter((l) => l.key === r.key && (!byIdentity || l.identity === r.identity) && !claimed.has(l.id)).sort(numeric);
      const hit = found[0];
      if (!hit) continue;
      claimed.add(hit.id);
      const copies = byIdentity ? found.slice(1).filter((l) => l.createdBy === hit.createdBy).map((l) => l.id) : [];
      for (const id of copies) claimed.add(id);
      out.push({ ...entry, id: hit.id, ...(copies.length ? { copies } : {}) });
    }
    return out;
  }

  it('looks up live webhooks by id and by name once, and resolves as a scan per entry does (random intents, names, URLs, creators, ids)', () => {
    const names = ['a', 'b', 'c'];
    const liveHook = fc.record({ id: fc.constantFrom('1', '2', '3', '10', '11', 'x7'), name: fc.constantFrom(...names), url: fc.constantFrom('https://h.example.com/1', 'https://h.example.com/2'), createdBy: fc.constantFrom(1, 2) });
    const entry = fc.record({
      name: fc.constantFrom(...names),
      id: fc.constantFrom('', '1', '3', '10', '99'),
      pending: fc.constantFrom(undefined, 'create', 'delete'),
      url: fc.option(fc.constantFrom('https://h.example.com/1', 'https://h.example.com/2'), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(liveHook, { maxLength: 10 }), fc.array(entry, { maxLength: 8 }), (lives, entries) => {
        const webhooks = lives.map((l) => ({ ...liveWebhookOf(webhook(l.name), l.id), url: l.url, createdBy: l.createdBy }));
        const resources = entries.map((e, i): ManagedResource => {
          const base = { ...owned(webhook(`${e.name}`) as never, e.id), name: `${e.name}-${i}` };
          if (e.pending === undefined) return base;
          return { ...base, pending: e.pending as 'create' | 'delete', key: e.name, ...(e.url ? { identity: webhookIdentity(e.name, e.url) } : {}) };
        });
        const st = stateWith(...resources);
        expect(resolvePending(st, { integrations: [], webhooks }).state.resources).toEqual(resolveByScan(st, webhooks));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('plan changes as a discriminated union', () => {
  it('a draft without the live id its action needs is a planner bug', () => {
    const base = { resourceKind: 'Integration' as const, name: 'x', adopt: false, changes: [], reasons: [] };
    expect(() => toPlanChange({ ...base, action: 'update' })).toThrow(/needs the live id/);
    expect(() => toPlanChange({ ...base, action: 'delete' })).toThrow(/needs its id/);
    expect(toPlanChange({ ...base, action: 'delete', goneFromService: true })).toMatchObject({ action: 'delete', goneFromService: true });
    const rename = toPlanChange({ ...base, action: 'noop', renamedFrom: 'old', liveId: '3' });
    if (rename.action === 'noop' && rename.renamedFrom !== undefined) expect(rename.liveId).toBe('3');
    else throw new Error('not narrowed to a rename');
  });
});
