import { describe, expect, it } from 'vitest';
import { actionable, planChanges } from '../../src/plan/planner.js';
import { forgetStale } from '../../src/plan/stale.js';
import { renderText } from '../../src/plan/render-text.js';
import { comparePlans } from '../../src/plan/facts.js';
import { hasChanges } from '../../src/reconcile/plan-stage.js';
import type { DesiredResource, Plan, PlanOptions } from '../../src/plan/types.js';
import type { LiveIntegration, LiveWebhook } from '../../src/api/types.js';
import type { GovopsState } from '../../src/state/types.js';
import { integration, liveOf, liveWebhookOf, owned, sqlConfig, stateWith, webhook, SHAPES } from './fixtures.js';

const OPTS: PlanOptions = { prune: false, allowReplace: false };
const needsApply = (p: Plan): boolean => actionable(p).length > 0;

function plan(
  desired: DesiredResource[],
  integrations: LiveIntegration[],
  state: GovopsState,
  options: Partial<PlanOptions> = {},
  webhooks: LiveWebhook[] = [],
): Plan {
  return planChanges({ shapes: SHAPES, desired, live: { integrations, webhooks }, state, options: { ...OPTS, ...options } });
}

describe('planChanges: integrations', () => {
  it('plans a create with every field, secrets only as (sensitive)', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([d], [], stateWith());
    expect(p.changes).toHaveLength(1);
    expect(p.changes[0]).toMatchObject({ action: 'create', name: 'sql', adopt: false, integrationType: 'sql_analytics' });
    const pw = p.changes[0]!.changes.find((f) => f.path === 'config.password')!;
    expect(pw).toEqual({ path: 'config.password', sensitive: true, forcesReplace: false });
    expect(p.changes[0]!.changes.find((f) => f.path === 'config.port')?.after).toBe(1433); // default filled in
    expect(JSON.stringify(p)).not.toContain('pw-one');
    expect(p.summary).toMatchObject({ create: 1, update: 0, replace: 0, delete: 0, adopt: 0 });
  });

  it('plans zero changes when live matches (defaults filled, masked fields, fingerprints equal)', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([d], [liveOf(d, '7')], stateWith(owned(d, '7')));
    expect(p.changes.map((c) => c.action)).toEqual(['noop']);
    expect(needsApply(p)).toBe(false);
    expect(p.errors).toEqual([]);
  });

  it('an owned integration still creating or editing, nothing differing: settle (waited for, no fields, not a change); not one govops does not own', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    for (const status of ['creating', 'editing']) {
      const p = plan([d], [liveOf(d, '7', status)], stateWith(owned(d, '7')));
      expect(p.changes).toEqual([expect.objectContaining({ action: 'settle', liveId: '7', changes: [], reasons: [expect.objectContaining({ code: 'settling' })] })]);
      expect(p.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: 0, settle: 1 });
      expect(needsApply(p)).toBe(true);
      expect(hasChanges(p)).toBe(false);
      expect(renderText(p)).toContain('... Integration/sql (sql_analytics)');
      expect(renderText(p)).toContain('1 to wait for (still creating or editing)');
    }
    // deleting (not govops' delete: the manifest keeps it), or not owned (adopted): no wait
    expect(plan([d], [liveOf(d, '7', 'deleting')], stateWith(owned(d, '7'))).changes.map((c) => c.action)).toEqual(['noop']);
    expect(plan([d], [liveOf(d, '7', 'creating')], stateWith()).changes.map((c) => [c.action, c.adopt])).toEqual([['adopt', true]]);
    // a change besides: the update waits for the transition itself (409)
    const moved = integration('sql', 'sql_analytics', { ...sqlConfig(), port: 1500 });
    expect(plan([moved], [liveOf(d, '7', 'creating')], stateWith(owned(d, '7'))).changes.map((c) => c.action)).toEqual(['update']);
    // a saved plan (plan --out) is not stale because the wait is over by apply FILE; it is when a fix is needed now
    const saved = plan([d], [liveOf(d, '7', 'creating')], stateWith(owned(d, '7')));
    expect(comparePlans(saved, plan([d], [liveOf(d, '7')], stateWith(owned(d, '7'))))).toEqual([]);
    expect(comparePlans(saved, plan([d], [liveOf(d, '7', 'createError')], stateWith(owned(d, '7'))))).toEqual(['Integration/sql: a change now that the saved plan does not have (update)']);
  });

  it('a rotated secret plans an update with a (sensitive) change and no value', () => {
    const old = integration('sql', 'sql_analytics', sqlConfig());
    const rotated = integration('sql', 'sql_analytics', sqlConfig(undefined, 'pw-two'));
    const p = plan([rotated], [liveOf(old, '7')], stateWith(owned(old, '7')));
    expect(p.changes[0]).toMatchObject({ action: 'update', liveId: '7' });
    expect(p.changes[0]!.changes).toEqual([{ path: 'config.password', sensitive: true, forcesReplace: false }]);
    expect(JSON.stringify(p)).not.toMatch(/pw-(one|two)/);
  });

  it('a plain field change is an update with before/after', () => {
    const d = integration('sql', 'sql_analytics', { ...sqlConfig(), port: 1500 });
    const before = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([d], [liveOf(before, '7')], stateWith(owned(d, '7')));
    expect(p.changes[0]!.action).toBe('update');
    expect(p.changes[0]!.changes).toEqual([{ path: 'config.port', before: 1433, after: 1500, sensitive: false, forcesReplace: false }]);
  });

  it('matches by state id before natural key, and by natural key when not in state (adopt + update)', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    // the manifest moved to another host: the state id points at the one govops made, matched, and host is not editable
    const was = integration('sql', 'sql_analytics', sqlConfig('other.example.com'));
    const byId = plan([d], [liveOf(was, '7')], stateWith(owned(was, '7')));
    expect(byId.changes[0]).toMatchObject({ action: 'replace', liveId: '7', adopt: false });
    expect(byId.changes[0]!.blocked?.message).toMatch(/--allow-replace/);
    // the manifest as applied, but id 7 now holds another host: not the one govops made (stale record), a create
    const reused = plan([d], [liveOf(d, '7', 'enabled', { host: 'other.example.com' })], stateWith(owned(d, '7')));
    expect(reused.changes[0]).toMatchObject({ action: 'create', adopt: false });
    expect(reused.warnings.map((w) => w.message).join('\n')).toMatch(/recorded id 7 now holds another integration/);
    // not in state: adopted by natural key; the masked credentials cannot be compared: not changes
    const adopted = plan([d], [liveOf(d, '9')], stateWith());
    expect(adopted.changes[0]).toMatchObject({
      action: 'adopt',
      adopt: true,
      liveId: '9',
      changes: [],
      notComparable: { paths: ['config.password', 'config.username'], handling: 'record' },
    });
    expect(adopted.summary).toMatchObject({ adopt: 1, update: 0 });
    // --resend-secrets: sent once, so what state records was really sent
    const resent = plan([d], [liveOf(d, '9')], stateWith(), { resendSecrets: true });
    expect(resent.changes[0]).toMatchObject({ action: 'update', adopt: true, changes: [], notComparable: { handling: 'resend' } });
    // an adopted resource that differs anyway: the credentials go with the update
    const differs = plan([d], [liveOf(d, '9', 'enabled', { port: 1 })], stateWith());
    expect(differs.changes[0]).toMatchObject({ action: 'update', notComparable: { handling: 'send' } });
    expect(differs.changes[0]!.changes.map((f) => f.path)).toEqual(['config.port']);
  });

  it('stale records: the same question of the same values is answered once (observe, then the planner); other values anew', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const state = stateWith(owned(d, '7'));
    const inSync = [liveOf(d, '7')];
    const webhooks: LiveWebhook[] = [];
    const desired = [d];
    const first = forgetStale(state, { integrations: inSync, webhooks }, desired);
    expect(first.notes).toEqual([]);
    // the planner asks again with its own live object holding the same lists: the same answer, not worked out again
    expect(forgetStale(state, { integrations: inSync, webhooks }, desired)).toBe(first);
    // the same state against another list (id 7 now holds another host): asked anew, and the record is stale
    const reused = forgetStale(state, { integrations: [liveOf(d, '7', 'enabled', { host: 'other.example.com' })], webhooks }, desired);
    expect(reused).not.toBe(first);
    expect(reused.notes.map((n) => n.message).join('\n')).toMatch(/recorded id 7 now holds another integration/);
    expect(reused.state.resources).toEqual([]);
    // and other desired resources are another question too
    expect(forgetStale(state, { integrations: inSync, webhooks }, [])).not.toBe(reused);
  });

  it('an adopted resource without secrets and no difference is adopt only', () => {
    const d = integration('trino', 'distributed_sql', {});
    const p = plan([d], [liveOf(d, '3')], stateWith());
    expect(p.changes[0]).toMatchObject({ action: 'adopt', adopt: true });
    expect(needsApply(p)).toBe(true);
  });

  it('two live matches for one manifest is a plan error', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([d], [liveOf(d, '1'), liveOf(d, '2')], stateWith());
    expect(p.errors[0]).toMatch(/Integration\/sql: 2 live resources match/);
  });

  it('a non-editable change is a replace: blocked without --allow-replace, allowed with it', () => {
    const d = integration('sql', 'sql_analytics', { ...sqlConfig(), database: 'other' });
    const before = integration('sql', 'sql_analytics', sqlConfig());
    const live = liveOf(before, '7');
    const blocked = plan([d], [live], stateWith(owned(before, '7')));
    expect(blocked.changes[0]!.action).toBe('replace');
    expect(blocked.changes[0]!.changes).toContainEqual({ path: 'config.database', before: 'govern', after: 'other', sensitive: false, forcesReplace: true });
    expect(blocked.changes[0]!.blocked?.message).toMatch(/allow-replace/);
    const allowedNoCreds = plan([d], [live], stateWith(owned(before, '7')), { allowReplace: true });
    expect(allowedNoCreds.changes[0]!.blocked?.message).toMatch(/deleteCredentials/);
    const dc = integration('sql', 'sql_analytics', { ...sqlConfig(), database: 'other' }, {
      deleteCredentials: { authenticationType: 'userPassword', username: 'admin', password: 'x' },
    });
    const allowed = plan([dc], [live], stateWith(owned(before, '7')), { allowReplace: true });
    expect(allowed.changes[0]).toMatchObject({ action: 'replace', deleteNeedsCredentials: true });
    expect(allowed.changes[0]!.blocked?.message).toBeUndefined();
  });

  it('an integration in createError is fixed by an update (PUT), not a create', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const p = plan([d], [liveOf(d, '7', 'createError')], stateWith(owned(d, '7')));
    expect(p.changes[0]).toMatchObject({ action: 'update', liveId: '7' });
    expect(p.changes[0]!.reasons.map((r) => r.message).join()).toMatch(/createError: fixed by PUT/);
  });

  it('never deletes without --prune, and never deletes what is not in state', () => {
    const gone = integration('old', 'sql_analytics', sqlConfig('old.example.com'), { autoBootstrap: false });
    const stranger = integration('stranger', 'sql_analytics', sqlConfig('stranger.example.com'));
    const live = [liveOf(gone, '4'), liveOf(stranger, '5')];
    const noPrune = plan([], live, stateWith(owned(gone, '4')));
    expect(noPrune.changes).toEqual([]);
    expect(noPrune.warnings[0]?.message).toMatch(/Integration\/old .*--prune/);
    const pruned = plan([], live, stateWith(owned(gone, '4')), { prune: true });
    expect(pruned.changes).toHaveLength(1);
    expect(pruned.changes[0]).toMatchObject({ action: 'delete', name: 'old', liveId: '4' });
    expect(pruned.changes[0]!.manualScript?.command).toBe('govops scripts old --phase delete');
  });

  it('a prune of an autoBootstrap-true integration needing delete credentials is blocked with a way out', () => {
    const d = integration('old', 'cloud_warehouse', { host: 'cw.example.com', warehouse: 'w', database: 'd', authenticationType: 'userPassword', username: 'u', password: 'p', role: 'r' });
    const p = plan([], [liveOf(d, '4')], stateWith(owned(d, '4')), { prune: true });
    expect(p.changes[0]!.action).toBe('delete');
    expect(p.changes[0]!.blocked?.message).toMatch(/govops\/delete/);
    // It names the manifest field, not a section of the interface document.
    expect(p.changes[0]!.blocked?.message).toMatch(/spec\.deleteCredentials/);
    expect(p.changes[0]!.blocked?.message).not.toMatch(/\b2\.9\b/);
    // the annotation with credentials makes it deletable
    const marked = integration('old', 'cloud_warehouse', { host: 'cw.example.com', warehouse: 'w', database: 'd', authenticationType: 'userPassword', username: 'u', password: 'p', role: 'r' }, {
      annotations: { 'govops/delete': 'true' },
      deleteCredentials: { authenticationType: 'userPassword', username: 'a', password: 'b', role: 'r' },
    });
    const q = plan([marked], [liveOf(d, '4')], stateWith(owned(d, '4')), { prune: true });
    expect(q.changes[0]).toMatchObject({ action: 'delete', deleteNeedsCredentials: true });
    expect(q.changes[0]!.blocked?.message).toBeUndefined();
    const noPrune = plan([marked], [liveOf(d, '4')], stateWith(owned(d, '4')));
    expect(noPrune.changes[0]!.action).toBe('noop');
    expect(noPrune.warnings.map((w) => w.message)).toEqual(['Integration/old is marked govops/delete but is not deleted: run with --prune to delete it']);
  });

  it('--max-deletes exceeded: the deletes are blocked (not a plan error), the message names the flag', () => {
    const a = integration('a', 'object_store', { name: 'a', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'x', cloudLocationPath: 's3://a', authenticationType: 'auto' }, { autoBootstrap: false });
    const b = integration('b', 'object_store', { name: 'b', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'x', cloudLocationPath: 's3://b', authenticationType: 'auto' }, { autoBootstrap: false });
    const st = stateWith(owned(a, '1'), owned(b, '2'));
    const live = [liveOf(a, '1'), liveOf(b, '2')];
    const refused = plan([], live, st, { prune: true, allowEmpty: true, maxDeletes: 1 });
    expect(refused.errors).toEqual([]);
    expect(refused.deletionRefusal?.message).toMatch(/more than --max-deletes 1.*--max-deletes 2/);
    expect(refused.changes.every((c) => c.blocked?.code === 'deletion-guard' && c.blocked.message.startsWith('refused by the mass-deletion guard'))).toBe(true);
    const allowed = plan([], live, st, { prune: true, allowEmpty: true, maxDeletes: 2 });
    expect(allowed.deletionRefusal).toBeUndefined();
    expect(allowed.changes.filter((c) => c.blocked?.message)).toEqual([]);
  });

  it('says which script the manual flow needs', () => {
    const lake = integration('lake', 'lakehouse', { workspaceUrl: 'https://lake.example.com', httpPath: '/sql', token: 't' }, { autoBootstrap: false });
    const sql = integration('sql', 'sql_analytics', sqlConfig(), { autoBootstrap: false });
    const p = plan([lake, sql], [], stateWith());
    expect(p.changes.find((c) => c.name === 'lake')!.manualScript).toEqual({ phase: 'create', command: 'govops scripts lake --phase create m.yaml' });
    expect(p.changes.find((c) => c.name === 'sql')!.manualScript?.phase).toBe('initial-create');
    const auto = plan([integration('x', 'sql_analytics', sqlConfig('x.example.com'))], [], stateWith());
    expect(auto.changes[0]!.manualScript).toBeUndefined();
  });

  it('a renamed manifest takes over its resource instead of creating a duplicate', () => {
    const oldName = integration('old', 'sql_analytics', sqlConfig());
    const renamed = integration('new', 'sql_analytics', sqlConfig());
    const p = plan([renamed], [liveOf(oldName, '7')], stateWith(owned(oldName, '7')), { prune: true });
    expect(p.changes).toHaveLength(1);
    expect(p.changes[0]).toMatchObject({ action: 'noop', renamedFrom: 'old', liveId: '7' });
    expect(needsApply(p)).toBe(true);
  });
});

describe('planChanges: webhooks', () => {
  it('create, no-op, and any change is a replace (allowed without --allow-replace)', () => {
    const w = webhook('hook');
    expect(plan([w], [], stateWith()).changes[0]!.action).toBe('create');
    const live = liveWebhookOf(w, '11');
    expect(plan([w], [], stateWith(owned(w, '11')), {}, [live]).changes[0]!.action).toBe('noop');
    const changed = webhook('hook', { notificationType: ['modelCreated', 'modelDeleted'] });
    const p = plan([changed], [], stateWith(owned(w, '11')), {}, [live]);
    expect(p.changes[0]).toMatchObject({ action: 'replace', liveId: '11' });
    expect(p.changes[0]!.blocked?.message).toBeUndefined();
    expect(p.changes[0]!.changes[0]).toMatchObject({ path: 'notificationType', forcesReplace: true });
  });

  it('notificationType order does not matter', () => {
    const w = webhook('hook', { notificationType: ['b', 'a'] });
    const live = { ...liveWebhookOf(w, '11'), notificationType: ['a', 'b'] };
    expect(plan([w], [], stateWith(owned(w, '11')), {}, [live]).changes[0]!.action).toBe('noop');
  });

  it('a rotated webhook secret is a (sensitive) replace; an adopted secret cannot be compared', () => {
    const w = webhook('hook', { secret: 'one' });
    const live = liveWebhookOf(w, '11');
    const rotated = webhook('hook', { secret: 'two' });
    const p = plan([rotated], [], stateWith(owned(w, '11')), {}, [live]);
    expect(p.changes[0]!.changes).toEqual([{ path: 'secret', sensitive: true, forcesReplace: true }]);
    const adopted = plan([w], [], stateWith(), {}, [live]);
    expect(adopted.changes[0]).toMatchObject({ action: 'adopt', adopt: true, changes: [], notComparable: { paths: ['secret'], handling: 'record' } });
    expect(adopted.warnings.map((w) => w.message)).toEqual([]);
    expect(JSON.stringify([p, adopted])).not.toMatch(/"(one|two)"/);
  });

  it('an adopted webhook that differs is replaced only with --allow-replace (it was not created by govops)', () => {
    const live = liveWebhookOf(webhook('hook'), '11');
    const changed = webhook('hook', { url: 'https://hooks.example.com/other' });
    const p = plan([changed], [], stateWith(), {}, [live]);
    expect(p.changes[0]).toMatchObject({ action: 'replace', adopt: true });
    expect(p.changes[0]!.blocked?.message).toMatch(/--allow-replace/);
    expect(plan([changed], [], stateWith(), { allowReplace: true }, [live]).changes[0]!.blocked?.message).toBeUndefined();
  });

  it('prunes only owned webhooks', () => {
    const mine = webhook('mine');
    const theirs = webhook('theirs');
    const p = plan([], [], stateWith(owned(mine, '1')), { prune: true }, [liveWebhookOf(mine, '1'), liveWebhookOf(theirs, '2')]);
    expect(p.changes.map((c) => `${c.action}:${c.name}`)).toEqual(['delete:mine']);
  });
});
