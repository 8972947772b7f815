/**
 * The manual-flow gate in the plan (pure): which changes need which scripts (interface 4.1, script table),
 * when the manifest's acknowledgment lets them through, and what the plan says about them.
 */
import { describe, expect, it } from 'vitest';
import { manualStepToken } from '../../src/reconcile/manual-step-token.js';
import { relocateChange } from '../../src/plan/manual-steps.js';
import { planChanges } from '../../src/plan/planner.js';
import { renderMarkdown } from '../../src/plan/render-markdown.js';
import { renderText } from '../../src/plan/render-text.js';
import type { DesiredIntegration, DesiredResource, Plan, PlanOptions, ResourceChange } from '../../src/plan/types.js';
import type { LiveIntegration } from '../../src/api/types.js';
import type { IntegrationType } from '../../src/kinds/registry.js';
import type { GovopsState } from '../../src/state/types.js';
import { SHAPES, integration, liveOf, owned, sqlConfig, stateWith } from './fixtures.js';

const OPTS: PlanOptions = { prune: false, allowReplace: false };

function plan(desired: DesiredResource[], live: LiveIntegration[], state: GovopsState, options: Partial<PlanOptions> = {}): Plan {
  return planChanges({ shapes: SHAPES, desired, live: { integrations: live, webhooks: [] }, state, options: { ...OPTS, ...options } });
}

const CONFIGS: Record<string, Record<string, unknown>> = {
  sql_analytics: sqlConfig('sql.example.com'),
  lakehouse: { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 't' },
  columnar_warehouse: { host: 'col.example.com', database: 'gov', authenticationType: 'userPassword', username: 'u', password: 'p' },
  cloud_warehouse: { host: 'cw.example.com', warehouse: 'W', database: 'D', authenticationType: 'userPassword', username: 'u', password: 'p' },
  object_store: { name: 'os', cloudAccountId: '1', cloudRegion: 'r', cloudLocationRole: 'x', cloudLocationPath: 's3://a', authenticationType: 'auto' },
  dataset_warehouse: { role: 'r', datasetSuffix: '_s', location: 'eu', credential: '{}' },
};

function manual(name: string, type: IntegrationType, config = CONFIGS[type]!, annotations?: Record<string, string>): DesiredIntegration {
  return integration(name, type, config, { autoBootstrap: false, ...(annotations ? { annotations } : {}) });
}

const ack = (value: string) => ({ 'govops/manual-step': value });
const token = (phase: 'create' | 'edit' | 'delete' | 'cleanup', d: DesiredIntegration): string => manualStepToken(phase, d.body.type, d.body.config);
const only = (p: Plan): ResourceChange => {
  expect(p.changes).toHaveLength(1);
  return p.changes[0]!;
};

describe('which changes wait for a manual step (script table)', () => {
  it('create: initial-create + create for sql_analytics and columnar_warehouse, create for lakehouse and cloud_warehouse', () => {
    for (const type of ['sql_analytics', 'columnar_warehouse'] as const) {
      const c = only(plan([manual('m', type)], [], stateWith()));
      expect(c.manualStep?.scripts.map((s) => s.phase)).toEqual(['initial-create', 'create']);
      expect(c.manualStep?.acknowledgment?.value).toBe(`create:${token('create', manual('m', type))}`);
    }
    for (const type of ['lakehouse', 'cloud_warehouse'] as const) {
      const c = only(plan([manual('m', type)], [], stateWith()));
      expect(c.manualStep?.scripts).toEqual([{ phase: 'create', command: 'govops scripts m --phase create m.yaml' }]);
      expect(c).toMatchObject({ action: 'create', manualStep: { status: 'awaiting' } });
      expect(c.blocked?.message).toMatch(/^awaiting manual step/);
    }
  });

  it('no gate without a script: autoBootstrap true, object_store, dataset_warehouse, distributed_sql', () => {
    const auto = integration('a', 'sql_analytics', sqlConfig());
    expect(only(plan([auto], [], stateWith())).manualStep).toBeUndefined();
    for (const type of ['object_store', 'dataset_warehouse'] as const) {
      const c = only(plan([manual('m', type)], [], stateWith()));
      expect(c.manualStep).toBeUndefined();
      expect(c.blocked?.message).toBeUndefined();
    }
  });

  it('edit: an update of sql_analytics, lakehouse, columnar_warehouse or cloud_warehouse waits for the edit script', () => {
    for (const type of ['sql_analytics', 'lakehouse', 'columnar_warehouse', 'cloud_warehouse'] as const) {
      const before = manual('m', type);
      const after = manual('m', type, { ...CONFIGS[type]!, port: 1444 });
      const c = only(plan([after], [liveOf(before, '7')], stateWith(owned(before, '7'))));
      expect(c.action).toBe('update');
      expect(c.manualStep).toMatchObject({ status: 'awaiting', scripts: [{ phase: 'edit', command: 'govops scripts m --phase edit m.yaml' }] });
      expect(c.manualStep!.acknowledgment!.line).toBe(`govops/manual-step: "edit:${token('edit', after)}"`);
      expect(c.manualStep!.reason).toBe('the manifest has no govops/manual-step annotation');
    }
  });

  it('the matching acknowledgment lets the change through; a stale one (config changed since) does not', () => {
    const before = manual('lake', 'lakehouse');
    const edited = manual('lake', 'lakehouse', { ...CONFIGS.lakehouse!, httpPath: '/sql/2' });
    const live = [liveOf(before, '7')];
    const st = stateWith(owned(before, '7'));
    const acked = manual('lake', 'lakehouse', edited.body.config, ack(`edit:${token('edit', edited)}`));
    const ok = only(plan([acked], live, st));
    expect(ok.manualStep).toMatchObject({ status: 'acknowledged' });
    expect(ok.blocked?.message).toBeUndefined();
    // changed again after the script ran: the old acknowledgment is stale
    const again = manual('lake', 'lakehouse', { ...CONFIGS.lakehouse!, httpPath: '/sql/3' }, ack(`edit:${token('edit', edited)}`));
    const stale = only(plan([again], live, st));
    expect(stale.manualStep?.status).toBe('awaiting');
    expect(stale.manualStep?.reason).toMatch(/acknowledges edit:[0-9a-f]{8}, a script run for another configuration/);
    expect(stale.manualStep?.acknowledgment?.value).toBe(`edit:${token('edit', again)}`);
    // an acknowledgment of another phase does not count
    const wrongPhase = manual('lake', 'lakehouse', edited.body.config, ack(`create:${token('create', edited)}`));
    expect(only(plan([wrongPhase], live, st)).manualStep?.reason).toMatch(/acknowledges create:[0-9a-f]{8}, but this change needs edit:/);
  });

  it('a credential rotation (only secret values change) is asked for no script when the configuration is acknowledged', () => {
    const cfg = { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 'old' };
    const before = integration('lake', 'lakehouse', cfg, { autoBootstrap: false, secretPaths: ['config.token'] });
    const live = [liveOf(before, '7')];
    const st = stateWith(owned(before, '7'));
    const rotated = (annotation?: string, config: Record<string, unknown> = cfg) =>
      integration('lake', 'lakehouse', { ...config, token: 'new' }, { autoBootstrap: false, secretPaths: ['config.token'], ...(annotation ? { annotations: ack(annotation) } : {}) });
    // the create script ran for this very configuration (the secret's value is not part of it): the PUT goes through
    const afterCreate = only(plan([rotated(`create:${manualStepToken('create', 'lakehouse', cfg)}`)], live, st));
    expect(afterCreate.action).toBe('update');
    expect(afterCreate.changes.every((f) => f.sensitive)).toBe(true);
    expect(afterCreate.manualStep).toMatchObject({ status: 'acknowledged' });
    expect(afterCreate.manualStep!.acknowledgment!.value).toBe(`create:${manualStepToken('create', 'lakehouse', cfg)}`);
    expect(afterCreate.blocked).toBeUndefined();
    // so does an edit acknowledged for it
    expect(only(plan([rotated(`edit:${manualStepToken('edit', 'lakehouse', cfg)}`)], live, st)).blocked).toBeUndefined();
    // no acknowledgment of this configuration (none, or one for another): asked, as for any PUT
    expect(only(plan([rotated()], live, st)).manualStep?.status).toBe('awaiting');
    const other = { ...cfg, httpPath: '/sql/0' };
    expect(only(plan([rotated(`create:${manualStepToken('create', 'lakehouse', other)}`)], live, st)).manualStep?.status).toBe('awaiting');
    // a non-secret field changing with it needs the edit script
    const both = only(plan([rotated(`create:${manualStepToken('create', 'lakehouse', cfg)}`, { ...cfg, httpPath: '/sql/2' })], live, st));
    expect(both.manualStep?.status).toBe('awaiting');
    expect(both.manualStep?.reason).toMatch(/needs edit:/);
  });

  it('createError: the fixing PUT waits for the edit script, and the plan shows the cleanup path', () => {
    const d = manual('sql', 'sql_analytics');
    const c = only(plan([d], [liveOf(d, '7', 'createError')], stateWith(owned(d, '7'))));
    expect(c.action).toBe('update');
    expect(c.manualStep?.scripts.map((s) => s.phase)).toEqual(['edit']);
    expect(c.failedCreation?.cleanup).toEqual([
      { phase: 'cleanup', command: 'govops scripts sql --phase cleanup m.yaml' },
      { phase: 'post-cleanup', command: 'govops scripts sql --phase post-cleanup m.yaml' },
    ]);
    expect(c.failedCreation?.remove).toContain(`govops/manual-step: "cleanup:${token('cleanup', d)}"`);
    const text = renderText(plan([d], [liveOf(d, '7', 'createError')], stateWith(owned(d, '7'))));
    expect(text).toContain('! the creation failed (status createError)');
    expect(text).toContain('!   1. govops scripts sql --phase cleanup m.yaml');
    expect(text).toContain('!   2. govops scripts sql --phase post-cleanup m.yaml');
    // columnar_warehouse: cleanup only; lakehouse has no cleanup script
    const col = manual('col', 'columnar_warehouse');
    const cc = only(plan([col], [liveOf(col, '8', 'createError')], stateWith(owned(col, '8'))));
    expect(cc.failedCreation?.cleanup.map((s) => s.phase)).toEqual(['cleanup']);
    const lake = manual('lake', 'lakehouse');
    expect(only(plan([lake], [liveOf(lake, '9', 'createError')], stateWith(owned(lake, '9')))).failedCreation?.cleanup).toEqual([]);
  });

  it('delete (govops/delete + --prune): the delete script; after a failed creation the cleanup scripts', () => {
    const d = manual('sql', 'sql_analytics', CONFIGS.sql_analytics, { 'govops/delete': 'true' });
    const st = stateWith(owned(d, '7'));
    const del = only(plan([d], [liveOf(d, '7')], st, { prune: true }));
    expect(del).toMatchObject({ action: 'delete', manualStep: { status: 'awaiting', scripts: [{ phase: 'delete' }] } });
    expect(del.manualStep?.acknowledgment?.value).toBe(`delete:${token('delete', d)}`);
    const acked = manual('sql', 'sql_analytics', CONFIGS.sql_analytics, { 'govops/delete': 'true', 'govops/manual-step': `delete:${token('delete', d)}` });
    expect(only(plan([acked], [liveOf(d, '7')], st, { prune: true })).blocked?.message).toBeUndefined();
    const failed = only(plan([d], [liveOf(d, '7', 'createError')], st, { prune: true }));
    expect(failed.manualStep?.scripts.map((s) => s.phase)).toEqual(['cleanup', 'post-cleanup']);
    expect(failed.manualStep?.acknowledgment?.value).toBe(`cleanup:${token('cleanup', d)}`);
    // lakehouse has no delete script: deleted without a step
    const lake = manual('lake', 'lakehouse', CONFIGS.lakehouse, { 'govops/delete': 'true' });
    const l = only(plan([lake], [liveOf(lake, '8')], stateWith(owned(lake, '8')), { prune: true }));
    expect(l.action).toBe('delete');
    expect(l.manualStep).toBeUndefined();
  });

  it('a prune without a manifest cannot be acknowledged: it waits, saying how to restore the manifest', () => {
    const d = manual('old', 'cloud_warehouse');
    const c = only(plan([], [liveOf(d, '4')], stateWith(owned(d, '4')), { prune: true }));
    expect(c.action).toBe('delete');
    expect(c.manualStep?.status).toBe('awaiting');
    expect(c.manualStep?.acknowledgment).toBeUndefined();
    expect(c.manualStep?.reason).toMatch(/no manifest to acknowledge it in: restore the manifest with .*govops\/delete.*govops scripts old --phase delete/);
  });

  it('replace: the delete script of the old one, then the create scripts of the new one, in one annotation', () => {
    const before = manual('sql', 'sql_analytics');
    const after = manual('sql', 'sql_analytics', { ...CONFIGS.sql_analytics!, database: 'other' });
    const c = only(plan([after], [liveOf(before, '7')], stateWith(owned(before, '7')), { allowReplace: true }));
    expect(c.action).toBe('replace');
    expect(c.manualStep?.scripts.map((s) => s.phase)).toEqual(['delete', 'initial-create', 'create']);
    const value = `delete:${token('delete', after)} create:${token('create', after)}`;
    expect(c.manualStep?.acknowledgment?.value).toBe(value);
    const acked = manual('sql', 'sql_analytics', after.body.config, ack(value));
    expect(only(plan([acked], [liveOf(before, '7')], stateWith(owned(before, '7')), { allowReplace: true })).manualStep?.status).toBe('acknowledged');
    // half an acknowledgment is not enough
    const half = manual('sql', 'sql_analytics', after.body.config, ack(`create:${token('create', after)}`));
    expect(only(plan([half], [liveOf(before, '7')], stateWith(owned(before, '7')), { allowReplace: true })).manualStep?.status).toBe('awaiting');
  });

  it('--manual-steps trust: nothing waits, the scripts are still named', () => {
    const c = only(plan([manual('lake', 'lakehouse')], [], stateWith(), { manualSteps: 'trust' }));
    expect(c.manualStep?.status).toBe('trusted');
    expect(c.blocked?.message).toBeUndefined();
    expect(renderText(plan([manual('lake', 'lakehouse')], [], stateWith(), { manualSteps: 'trust' }))).toContain(
      '# manual step not checked (--manual-steps trust): run govops scripts lake --phase create m.yaml in the platform first',
    );
  });

  it('only the waiting change is held: the rest of the plan is unaffected, and nothing is a plan error', () => {
    const p = plan([manual('lake', 'lakehouse'), integration('auto', 'sql_analytics', sqlConfig('auto.example.com'))], [], stateWith());
    expect(p.errors).toEqual([]);
    expect(p.changes.find((c) => c.name === 'auto')).toMatchObject({ action: 'create' });
    expect(p.changes.find((c) => c.name === 'auto')!.blocked?.message).toBeUndefined();
  });
});

describe('what the plan shows', () => {
  it('text: `! awaiting manual step`, the exact commands and the annotation to add', () => {
    const d = manual('sql', 'sql_analytics');
    const text = renderText(plan([d], [], stateWith()));
    expect(text).toContain('! awaiting manual step: the manifest has no govops/manual-step annotation');
    expect(text).toContain('!   1. govops scripts sql --phase initial-create m.yaml');
    expect(text).toContain('!   2. govops scripts sql --phase create m.yaml');
    expect(text).toContain(`!   govops/manual-step: "create:${token('create', d)}"`);
    expect(text).toContain('1 change is awaiting a manual step'); // the old code: '1 change(s) are'
    expect(text).not.toContain('! blocked:');
    const acked = renderText(plan([manual('sql', 'sql_analytics', CONFIGS.sql_analytics, ack(`create:${token('create', d)}`))], [], stateWith()));
    expect(acked).toContain(`# manual step acknowledged (create:${token('create', d)})`);
    expect(acked).not.toContain('awaiting');
  });

  it('text: a change awaiting a manual step that something else blocks too is counted blocked, not awaiting', () => {
    // apply skips it as blocked (exit 1): acknowledging the scripts alone would not let it through
    const before = manual('sql', 'sql_analytics');
    const after = manual('sql', 'sql_analytics', { ...CONFIGS.sql_analytics!, database: 'other' });
    const p = plan([after, manual('lake', 'lakehouse')], [liveOf(before, '7')], stateWith(owned(before, '7')));
    expect(p.changes.find((c) => c.name === 'sql')).toMatchObject({ action: 'replace', manualStep: { status: 'awaiting' }, blocked: { code: 'replace-not-allowed' } });
    const text = renderText(p);
    expect(text).toContain('1 change is awaiting a manual step and will not be applied until the manifest acknowledges it.');
    expect(text).toContain('1 change is blocked and will not be applied.');
  });

  it('markdown: the wait, the commands and the annotation in the table', () => {
    const d = manual('lake', 'lakehouse');
    const md = renderMarkdown(plan([d], [], stateWith()));
    expect(md).toContain('**awaiting manual step:**');
    expect(md).toContain('`govops scripts lake --phase create m.yaml`');
    expect(md).toContain(`\`govops/manual-step: "create:${token('create', d)}"\``);
  });

  it('JSON: the gate is part of the plan value', () => {
    const d = manual('lake', 'lakehouse');
    const json = JSON.parse(JSON.stringify(plan([d], [], stateWith())));
    expect(json.changes[0].manualStep).toEqual({
      status: 'awaiting',
      scripts: [{ phase: 'create', command: 'govops scripts lake --phase create m.yaml' }],
      acknowledgment: { value: `create:${token('create', d)}`, line: `govops/manual-step: "create:${token('create', d)}"` },
      reason: 'the manifest has no govops/manual-step annotation',
    });
  });

  it('the commands follow the file when a report renames it (the daemon names files as the user knows them)', () => {
    const d = manual('lake', 'lakehouse');
    const c = relocateChange(only(plan([d], [], stateWith())), 'manifests/my lake.yaml');
    expect(c.source?.file).toBe('manifests/my lake.yaml');
    expect(c.manualStep?.scripts[0]?.command).toBe(`govops scripts lake --phase create 'manifests/my lake.yaml'`);
    expect(c.blocked?.message).toContain(`govops scripts lake --phase create 'manifests/my lake.yaml'`);
    expect(c.blocked?.message).not.toMatch(/m\.yaml(?!')/);
  });
});
