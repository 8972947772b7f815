/**
 * Ownership and identity in the planner (issue 22): a recorded id is written to only while it names the item
 * govops recorded; only govops' own webhooks are deleted; the guard counts every delete, blocked or not; credentials
 * are compared by recorded fingerprint only, whatever the service shows; host names compare case-insensitively.
 */
import { describe, expect, it } from 'vitest';
import { desiredIdentity, forgetStale } from '../../src/plan/stale.js';
import type { DesiredResource, Plan } from '../../src/plan/types.js';
import type { ManagedResource } from '../../src/state/types.js';
import { KEY, SHAPES, integration, planner, liveOf, liveWebhookOf, owned, sqlConfig, stateWith, webhook } from './fixtures.js';

const plan = planner({ prune: true, allowReplace: true });

/** A state entry as this govops records it: with the identity of what it applied. */
const recorded = (d: DesiredResource, id: string): ManagedResource => ({ ...owned(d as never, id), identity: desiredIdentity(d, KEY)! });

const writes = (p: Plan) => p.changes.filter((c) => c.action !== 'noop' && !c.goneFromService && !c.blocked).map((c) => `${c.action} ${c.resourceKind}/${c.name} ${c.liveId ?? ''}`.trim());

describe('identity check on every write by a recorded id', () => {
  const sql = integration('sql', 'sql_analytics', sqlConfig('db.example.com'));
  const hook = webhook('hook');

  it('an outsider that got a reused id is never deleted or replaced: the record is forgotten, the manifest planned by natural key', () => {
    const outsiderSql = liveOf(integration('x', 'sql_analytics', sqlConfig('outsider.example.com')), '7');
    const outsiderHook = { ...liveWebhookOf(webhook('theirs'), '1'), createdBy: 2 };
    const gone = webhook('gone');
    const state = stateWith(recorded(sql, '7'), recorded(hook, '1'), recorded(gone, '2'));
    // the manifests of sql and hook are kept, gone's removed: its id 2 now holds another team's webhook
    const outsider2 = { ...liveWebhookOf(webhook('other-team', { url: 'https://team.example.com/in' }), '2') };
    const p = plan([sql, hook], { integrations: [outsiderSql], webhooks: [outsiderHook, outsider2] }, state, { maxDeletes: 10 });
    expect(writes(p).sort()).toEqual(['create Integration/sql', 'create Webhook/hook']);
    expect(p.changes.some((c) => c.liveId === '7' || c.liveId === '1' || c.liveId === '2')).toBe(false);
    const notes = p.warnings.map((w) => w.message).join('\n');
    expect(notes).toMatch(/Integration\/sql: the recorded id 7 now holds another integration \(sql_analytics:host=outsider.example.com; govops recorded sql_analytics:host=db.example.com\)/);
    expect(notes).toMatch(/Webhook\/hook: the recorded id 1 now holds another webhook/);
    expect(notes).toMatch(/Webhook\/gone: the recorded id 2 now holds another webhook/);
    // and the state the engine saves has forgotten them
    const forgotten = forgetStale(state, { integrations: [outsiderSql], webhooks: [outsiderHook, outsider2] }, [sql, hook]);
    expect(forgotten.state.resources).toEqual([]);
  });

  it("the note naming the webhook now at a reused id does not print a credential its url carries (another team's token)", () => {
    const outsider = { ...liveWebhookOf(webhook('theirs', { url: 'https://team.example.com/in?token=TheirHookToken77' }), '1'), createdBy: 2 };
    const withPassword = { ...liveWebhookOf(webhook('theirs-too', { url: 'https://svc:TheirHookPass77@team.example.com/in' }), '2'), createdBy: 2 };
    const gone = webhook('gone');
    const notes = forgetStale(stateWith(recorded(hook, '1'), recorded(gone, '2')), { integrations: [], webhooks: [outsider, withPassword] }, [hook])
      .notes.map((n) => n.message)
      .join('\n');
    expect(notes).toMatch(/Webhook\/hook: the recorded id 1 now holds another webhook \(name "theirs", url https:\/\/team\.example\.com\/in\?…;/);
    expect(notes).toMatch(/Webhook\/gone: the recorded id 2 now holds another webhook \(name "theirs-too", url https:\/\/\*\*\*@team\.example\.com\/in;/);
    expect(notes).not.toContain('TheirHookToken77');
    expect(notes).not.toContain('TheirHookPass77');
  });

  it('entries that recorded their identity are checked without indexing the manifests by name (read only for older entries)', () => {
    const outsiderSql = liveOf(integration('x', 'sql_analytics', sqlConfig('outsider.example.com')), '7');
    let indexed = 0;
    const desired = Object.assign([sql, hook], { map: function (this: DesiredResource[], ...args: Parameters<DesiredResource[]['map']>) {
      indexed++;
      return Array.prototype.map.apply(this, args);
    } }) as DesiredResource[];
    const out = forgetStale(stateWith(recorded(sql, '7'), recorded(hook, '1')), { integrations: [outsiderSql, liveOf(sql, '8')], webhooks: [liveWebhookOf(hook, '1')] }, desired);
    expect(out.state.resources.map((r) => r.name)).toEqual(['hook']);
    expect(indexed).toBe(0);
    // an entry written before identities were recorded: its manifest (same spec hash) says what it was
    const older = { ...owned(sql as never, '7') };
    expect(forgetStale(stateWith(older), { integrations: [outsiderSql], webhooks: [] }, desired).state.resources).toEqual([]);
    expect(indexed).toBe(1);
  });

  it('data sources too: a recorded id now holding another integration\'s or prefix\'s data source is forgotten; its own kept', () => {
    const entry = (name: string, id: string, identity?: string): ManagedResource => ({
      kind: 'DataSource', name, id, origin: 'created', specHash: 'h', secretFingerprints: {}, updatedAt: '2026-01-01T00:00:00.000Z',
      ...(identity !== undefined ? { identity } : {}),
    });
    const state = stateWith(entry('events', '1', '3|s3://raw/base/events'), entry('logs', '2', '3|s3://raw/base/logs'), entry('old', '4'));
    const live = [
      { id: '1', integrationId: '3', dataSourceName: 'events', prefix: 's3://raw/base/events' },
      { id: '2', integrationId: '9', dataSourceName: 'theirs', prefix: 's3://theirs/base/a' },
      { id: '4', integrationId: '9', dataSourceName: 'theirs-too', prefix: 's3://theirs/base/b' },
    ];
    const out = forgetStale(state, { integrations: [], webhooks: [], dataSources: live }, []);
    // logs is forgotten; an entry without a recorded identity (written before it was) is not checked
    expect(out.state.resources.map((r) => r.name)).toEqual(['events', 'old']);
    expect(out.notes.map((n) => n.message).join('\n')).toMatch(
      /DataSource\/logs: the recorded id 2 now holds another data source \(integration 9, prefix s3:\/\/theirs\/base\/a; govops recorded integration 3, prefix s3:\/\/raw\/base\/logs\)/,
    );
    // without the data-source list (a service without data sources) nothing is checked
    expect(forgetStale(state, { integrations: [], webhooks: [] }, []).state).toBe(state);
  });

  it('the item govops recorded is still written to by id (an edit, a replace, a prune)', () => {
    const edited = integration('sql', 'sql_analytics', { ...sqlConfig('db.example.com'), port: 1500 });
    const moved = webhook('hook', { url: 'https://new.example.com/hook' });
    const p = plan([edited, moved], { integrations: [liveOf(sql, '7')], webhooks: [liveWebhookOf(hook, '1')] }, stateWith(recorded(sql, '7'), recorded(hook, '1')));
    expect(writes(p).sort()).toEqual(['replace Webhook/hook 1', 'update Integration/sql 7']);
    expect(plan([], { integrations: [liveOf(sql, '7')] }, stateWith(recorded(sql, '7')), { allowEmpty: true, maxDeletes: 1 }).changes[0]).toMatchObject({ action: 'delete', liveId: '7' });
  });

  it('the same identity spelled otherwise is the same item (host case, URL host case, a drifted editable key part)', () => {
    const upper = { ...liveOf(sql, '7'), config: { ...liveOf(sql, '7').config, host: 'DB.Example.COM' } };
    expect(plan([sql], { integrations: [upper] }, stateWith(recorded(sql, '7'))).changes[0]).toMatchObject({ action: 'noop', liveId: '7' });
    const hookUpper = { ...liveWebhookOf(hook, '1'), url: 'HTTPS://HOOKS.EXAMPLE.COM/hook' };
    expect(plan([hook], { webhooks: [hookUpper] }, stateWith(recorded(hook, '1'))).changes[0]).toMatchObject({ action: 'noop', liveId: '1' });
    // dataset_warehouse: the role is editable, so a role changed outside is drift of the same integration (a PUT)
    const ds = integration('ds', 'dataset_warehouse', { dataset: 'gov', role: 'r@x', location: 'US', credential: 'c' }, { autoBootstrap: false });
    const drifted = liveOf(ds, '4', 'enabled', { role: 'other@x' });
    expect(plan([ds], { integrations: [drifted] }, stateWith(recorded(ds, '4')), { manualSteps: 'trust' }).changes[0]).toMatchObject({ action: 'update', liveId: '4' });
  });

  it('an entry written before identities were recorded: checked by its manifest when it is what was applied, else by type', () => {
    const legacy = owned(sql, '7'); // no identity
    const other = liveOf(integration('x', 'sql_analytics', sqlConfig('outsider.example.com')), '7');
    expect(writes(plan([sql], { integrations: [other] }, stateWith(legacy)))).toEqual(['create Integration/sql']);
    // its manifest is gone: only the type can be checked
    const lake = liveOf(integration('x', 'lakehouse', { workspaceUrl: 'l.example.com', httpPath: '/p', token: 't' }), '7');
    const pruned = plan([], { integrations: [lake] }, stateWith(legacy), { allowEmpty: true, maxDeletes: 5 });
    expect(writes(pruned)).toEqual([]);
    expect(pruned.warnings.map((w) => w.message).join('\n')).toMatch(/recorded id 7 now holds another integration \(lakehouse:workspace=l.example.com; govops recorded type sql_analytics\)/);
  });
});

describe('the mass-deletion guard counts every planned delete, blocked or not', () => {
  /**
   * n integrations, all live and recorded: the first `manualCount` manual-flow sql_analytics (their deletes wait for
   * a manual step unless trusted), the others lakehouse (deleted without one).
   */
  function fleet(n: number, manualCount: number) {
    const desired = Array.from({ length: n }, (_, i) =>
      i < manualCount
        ? integration(`m${i}`, 'sql_analytics', { ...sqlConfig(`m${i}.example.com`) }, { autoBootstrap: false })
        : integration(`m${i}`, 'lakehouse', { workspaceUrl: `l${i}.example.com`, httpPath: '/p', token: 't' }),
    );
    return { desired, live: desired.map((d, i) => liveOf(d, String(i + 1))), state: stateWith(...desired.map((d, i) => recorded(d, String(i + 1)))) };
  }

  it('200 of 500 removed, 86 of them awaiting a manual step: refused whole, as with --manual-steps trust', () => {
    const m = fleet(500, 86);
    const removed = m.desired.slice(0, 200);
    for (const manualSteps of ['require', 'trust'] as const) {
      const p = plan(m.desired.slice(200), { integrations: m.live }, m.state, { manualSteps });
      expect(p.deletionRefusal, manualSteps).toMatchObject({ rule: 'share', refused: 200, managed: 500, limit: 125 });
      expect(writes(p), manualSteps).toEqual([]);
      expect(p.changes.filter((c) => c.action === 'delete')).toHaveLength(removed.length);
    }
    // within the share (120 of 500, 86 of them awaiting): the others go, the awaiting ones wait
    const within = plan(m.desired.slice(120), { integrations: m.live }, m.state);
    expect(within.deletionRefusal).toBeUndefined();
    expect(writes(within)).toHaveLength(34);
    expect(within.changes.filter((c) => c.manualStep?.status === 'awaiting')).toHaveLength(86);
  });

  it('--max-deletes counts the blocked deletes too', () => {
    const m = fleet(4, 1);
    const p = plan(m.desired.slice(2), { integrations: m.live }, m.state, { maxDeletes: 1 });
    expect(p.deletionRefusal).toMatchObject({ rule: 'max-deletes', refused: 2 });
    expect(writes(p)).toEqual([]);
  });
});

describe('credentials returned by the service are never compared as values', () => {
  const sql = integration('sql', 'sql_analytics', sqlConfig('db.example.com', 'pw-one'));
  for (const shown of ['[REDACTED]', '****', '********', 'pw-one', 'something-else', '']) {
    it(`shown as ${JSON.stringify(shown)}: only the recorded fingerprint counts`, () => {
      const live = liveOf(sql, '7', 'enabled', { password: shown, username: shown });
      expect(plan([sql], { integrations: [live] }, stateWith(recorded(sql, '7'))).changes[0]).toMatchObject({ action: 'noop', changes: [] });
      const rotated = integration('sql', 'sql_analytics', sqlConfig('db.example.com', 'pw-two'));
      expect(plan([rotated], { integrations: [live] }, stateWith(recorded(sql, '7'))).changes[0]).toMatchObject({
        action: 'update',
        changes: [{ path: 'config.password', sensitive: true, forcesReplace: false }],
      });
      // not recorded (adoption): cannot be compared, never a change
      expect(plan([sql], { integrations: [live] }, stateWith()).changes[0]).toMatchObject({ action: 'adopt', changes: [], notComparable: { handling: 'record' } });
    });
  }

  it('an ignored credential is never sent back as the service showed it', async () => {
    const { preserveIgnoredFields } = await import('../../src/plan/ignore.js');
    const d = integration('sql', 'sql_analytics', { ...sqlConfig('db.example.com'), port: 1500 }, { annotations: { 'govops/ignore-fields': 'config.password' } });
    const live = liveOf(d, '7', 'enabled', { password: '[REDACTED]', port: 1433 });
    const p = plan([d], { integrations: [live] }, stateWith(recorded(d, '7')));
    const [body] = preserveIgnoredFields([d], p, { integrations: [live], webhooks: [] }, SHAPES);
    expect((body as typeof d).body.config!.password).toBe('pw-one');
  });
});

describe('host names compare case-insensitively', () => {
  it('a manifest host SQLPool.Example.net stored lower-cased is a no-op, not a replace', () => {
    const d = integration('pool', 'sql_analytics', sqlConfig('SQLPool.Example.net'));
    const live = liveOf(d, '3', 'enabled', { host: 'sqlpool.example.net' });
    expect(plan([d], { integrations: [live] }, stateWith(recorded(d, '3'))).changes[0]).toMatchObject({ action: 'noop', changes: [] });
    expect(plan([d], { integrations: [live] }, stateWith()).changes[0]).toMatchObject({ action: 'adopt', changes: [] });
  });

  it('the host of a URL too (lakehouse workspaceUrl, columnar_warehouse okta.idpHost, a webhook url); paths keep their case', () => {
    const lake = integration('lake', 'lakehouse', { workspaceUrl: 'https://Lake.Example.com/', httpPath: '/p', token: 't' });
    expect(plan([lake], { integrations: [liveOf(lake, '2', 'enabled', { workspaceUrl: 'https://lake.example.com/' })] }, stateWith(recorded(lake, '2'))).changes[0]!.action).toBe('noop');
    const okta = { username: 'u', password: 'p', appId: 'a', idpHost: 'https://IdP.Example.com/Path', role: 'r' };
    const col = integration('col', 'columnar_warehouse', { host: 'col.example.com', database: 'd', authenticationType: 'okta', okta });
    const lower = liveOf(col, '4', 'enabled', { okta: { ...okta, idpHost: 'https://idp.example.com/Path' } });
    expect(plan([col], { integrations: [lower] }, stateWith(recorded(col, '4'))).changes[0]).toMatchObject({ action: 'noop' });
    const path = liveOf(col, '4', 'enabled', { okta: { ...okta, idpHost: 'https://idp.example.com/path' } });
    expect(plan([col], { integrations: [path] }, stateWith(recorded(col, '4'))).changes[0]!.changes.map((f) => f.path)).toEqual(['config.okta.idpHost']);
    const hook = webhook('hook', { url: 'https://Hooks.Example.com/In' });
    const live = { ...liveWebhookOf(hook, '1'), url: 'https://hooks.example.com/In' };
    expect(plan([hook], { webhooks: [live] }, stateWith(recorded(hook, '1'))).changes[0]).toMatchObject({ action: 'noop' });
    expect(plan([hook], { webhooks: [{ ...live, url: 'https://hooks.example.com/in' }] }, stateWith(recorded(hook, '1'))).changes[0]).toMatchObject({ action: 'replace' });
  });
});
