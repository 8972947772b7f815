/**
 * The plan core of the operator controls (pure): target patterns, suspension, ignored fields (diff and the body
 * apply sends), and the facts of a saved plan with their comparison.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LiveIntegration, LiveWebhook } from '../../src/api/types.js';
import type { IntegrationManifest } from '../../src/manifests/types.js';
import { compareFacts, comparePlans, planFacts } from '../../src/plan/facts.js';
import { preserveIgnoredFields } from '../../src/plan/ignore.js';
import { actionable, planChanges } from '../../src/plan/planner.js';
import { recordSuspension } from '../../src/plan/suspend.js';
import { renderMarkdown } from '../../src/plan/render-markdown.js';
import { renderText } from '../../src/plan/render-text.js';
import { isTargeted, namedExactly, parseTargets, targetMatcher } from '../../src/plan/target.js';
import type { DesiredResource, PlanOptions } from '../../src/plan/types.js';
import { ignoreFieldProblem, splitIgnoreFields } from '../../src/service/annotations.js';
import { ignoreFieldFacts } from '../../src/kinds/registry.js';
import { annotationIssues } from '../../src/manifests/annotations.js';
import type { GovopsState } from '../../src/state/types.js';
import { HASH, SHAPES, integration, liveOf, liveWebhookOf, owned, sqlConfig, stateWith, webhook } from './fixtures.js';

const OPTS: PlanOptions = { prune: false, allowReplace: false };
function plan(desired: DesiredResource[], integrations: LiveIntegration[], webhooks: LiveWebhook[], state: GovopsState, options: Partial<PlanOptions> = {}) {
  return planChanges({ shapes: SHAPES, desired, live: { integrations, webhooks }, state, options: { ...OPTS, ...options } });
}

describe('--only patterns', () => {
  it('parses Kind/name with globs; kinds in any case; exact patterns name one resource', () => {
    const t = parseTargets(['integration/lake-a', 'Webhook/pager-*', '*/x?[0-9]']);
    expect(isTargeted(t, 'Integration', 'lake-a')).toBe(true);
    expect(isTargeted(t, 'Integration', 'lake-b')).toBe(false);
    expect(isTargeted(t, 'Webhook', 'pager-eu')).toBe(true);
    expect(isTargeted(t, 'Integration', 'pager-eu')).toBe(false);
    expect(isTargeted(t, 'Integration', 'xa7')).toBe(true);
    expect(isTargeted(t, 'Webhook', 'xa')).toBe(false);
    expect(namedExactly(t, 'Integration', 'lake-a')).toBe(true);
    expect(namedExactly(t, 'Webhook', 'pager-eu')).toBe(false);
  });

  it('targetMatcher answers as testing every pattern does (random exact and glob patterns, kinds in any case)', () => {
    const name = fc.constantFrom('lake-a', 'lake-b', 'pager-eu', 'xa7', 'x');
    const kind = fc.constantFrom('Integration', 'Webhook', 'DataSource');
    const pattern = fc.oneof(
      fc.tuple(fc.constantFrom('integration', 'Webhook', 'DATASOURCE', 'Integration'), name).map(([k, n]) => `${k}/${n}`),
      fc.constantFrom('Webhook/pager-*', '*/x?[0-9]', 'Integration/lake-?', '*/*', 'D*/x'),
    );
    fc.assert(
      fc.property(fc.array(pattern, { maxLength: 8 }), kind, name, (patterns, k, n) => {
        const t = parseTargets(patterns);
        const m = targetMatcher(t);
        expect(m.targeted(k, n)).toBe(isTargeted(t, k, n));
        expect(m.namedExactly(k, n)).toBe(namedExactly(t, k, n));
        expect(new Set(m.hits(k, n))).toEqual(new Set(t.filter((x) => x.kind.test(k) && x.name.test(n))));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses malformed patterns with the reason', () => {
    expect(() => parseTargets(['lake'])).toThrow(/expected Kind\/name/);
    expect(() => parseTargets(['Integration/'])).toThrow(/expected Kind\/name/);
    expect(() => parseTargets(['Connector/x'])).toThrow(/no kind matches "Connector"/);
    expect(() => parseTargets(['Integration/a/b'])).toThrow(/a name has no "\/"/);
    expect(() => parseTargets(['Integration/[ab'])).toThrow(/unclosed \[/);
  });

  it('a targeted plan keeps the selected changes, deletes only when named exactly, and counts the rest', () => {
    const a = integration('a', 'sql_analytics', sqlConfig('a.example.com'));
    const b = integration('b', 'sql_analytics', sqlConfig('b.example.com'));
    const gone = integration('gone', 'sql_analytics', sqlConfig('gone.example.com'), { autoBootstrap: false });
    const state = stateWith(owned(a, '1'), owned(b, '2'), owned(gone, '3'));
    const live = [liveOf(a, '1', 'enabled', { port: 1 }), liveOf(b, '2', 'enabled', { port: 2 }), liveOf(gone, '3')];
    const glob = plan([a, b], live, [], state, { prune: true, only: ['Integration/*'] });
    expect(glob.changes.map((c) => `${c.name}:${c.action}`)).toEqual(['a:update', 'b:update']);
    expect(glob.warnings.map((w) => w.message).join('\n')).toMatch(/Integration\/gone: not deleted in this targeted plan/);
    expect(glob.targets).toEqual({ only: ['Integration/*'], untargeted: 0 });
    const exact = plan([a, b], live, [], state, { prune: true, only: ['Integration/a', 'Integration/gone', 'Webhook/none'] });
    expect(exact.changes.map((c) => `${c.name}:${c.action}`)).toEqual(['a:update', 'gone:delete']);
    expect(exact.targets).toEqual({ only: ['Integration/a', 'Integration/gone', 'Webhook/none'], untargeted: 1 });
    expect(exact.warnings.map((w) => w.message)).toContain('--only Webhook/none matches no manifest or managed resource');
    expect(exact.summary).toMatchObject({ update: 1, delete: 1, noop: 0 });
  });

  it('a targeted plan with nothing to do says so of the targeted resources only, in text and in markdown', () => {
    const a = integration('a', 'sql_analytics', sqlConfig('a.example.com'));
    const b = integration('b', 'sql_analytics', sqlConfig('b.example.com'));
    const state = stateWith(owned(a, '1'), owned(b, '2'));
    // b differs in the service, but --only leaves it out: the service does not match the manifests
    const p = plan([a, b], [liveOf(a, '1'), liveOf(b, '2', 'enabled', { port: 2 })], [], state, { only: ['Integration/a'] });
    expect(p.changes.map((c) => `${c.name}:${c.action}`)).toEqual(['a:noop']);
    for (const out of [renderText(p), renderMarkdown(p)]) {
      expect(out).toContain('No changes in the targeted resources.');
      expect(out).not.toContain('the service matches the manifests');
    }
  });

  it('an error about an untargeted resource becomes a warning; one about a targeted resource stays an error', () => {
    const a = integration('a', 'sql_analytics', sqlConfig('a.example.com'));
    const h = webhook('dup');
    const live = [liveWebhookOf(h, '10'), liveWebhookOf(h, '11')];
    const p = plan([a, h], [], live, stateWith(), { only: ['Integration/a'] });
    expect(p.errors).toEqual([]);
    expect(p.warnings.map((w) => w.message).join('\n')).toMatch(/outside --only: Webhook\/dup: 2 live resources match/);
    expect(plan([a, h], [], live, stateWith(), { only: ['Webhook/dup'] }).errors.join()).toMatch(/Webhook\/dup: 2 live resources/);
  });
});

describe('govops/suspend', () => {
  const suspend = { 'govops/suspend': 'true' };
  it('a suspended resource is a noop marked suspended, whatever it would otherwise be (create, update, delete)', () => {
    const a = integration('a', 'sql_analytics', sqlConfig('a.example.com'), { annotations: suspend });
    const fresh = integration('fresh', 'sql_analytics', sqlConfig('fresh.example.com'), { annotations: suspend });
    const del = integration('del', 'sql_analytics', sqlConfig('del.example.com'), { annotations: { ...suspend, 'govops/delete': 'true' } });
    const state = stateWith(owned(a, '1'), owned(del, '2'));
    const p = plan([a, fresh, del], [liveOf(a, '1', 'enabled', { port: 9 }), liveOf(del, '2')], [], state, { prune: true });
    expect(actionable(p)).toEqual([]);
    for (const c of p.changes) expect(c).toMatchObject({ action: 'noop', suspended: true, changes: [] });
    expect(p.changes.find((c) => c.name === 'a')!.reasons.at(-1)?.message).toMatch(/suspended .*otherwise it would be updated \(config\.port\)/);
    expect(p.changes.find((c) => c.name === 'fresh')!.reasons.at(-1)?.message).toMatch(/otherwise it would be created/);
    expect(p.changes.find((c) => c.name === 'del')!.reasons.at(-1)?.message).toMatch(/otherwise it would be deleted/);
    expect(p.warnings.map((w) => w.message).join()).not.toMatch(/marked govops\/delete/);
  });

  it('suspension is recorded in state and a recorded one is never pruned; resuming clears it', () => {
    const a = integration('a', 'sql_analytics', sqlConfig('a.example.com'), { annotations: suspend });
    const state = stateWith(owned(a, '1'));
    const p = plan([a], [liveOf(a, '1')], [], state);
    const marked = recordSuspension(state, p.changes);
    expect(marked.resources[0]!.suspended).toBe(true);
    expect(recordSuspension(marked, p.changes)).toBe(marked);
    const pruned = plan([], [liveOf(a, '1')], [], marked, { prune: true, allowEmpty: true, maxDeletes: 5 });
    expect(actionable(pruned)).toEqual([]);
    expect(pruned.changes[0]).toMatchObject({ name: 'a', action: 'noop', suspended: true });
    expect(pruned.changes[0]!.reasons.at(-1)?.message).toMatch(/never pruned while suspended/);
    const resumed = integration('a', 'sql_analytics', sqlConfig('a.example.com'));
    const cleared = recordSuspension(marked, plan([resumed], [liveOf(resumed, '1')], [], marked).changes);
    expect(cleared.resources[0]).not.toHaveProperty('suspended');
  });

  it('extra copies of a suspended webhook are not deleted', () => {
    const h = webhook('hook', {}, suspend);
    const p = plan([h], [], [liveWebhookOf(h, '1'), liveWebhookOf(h, '2')], stateWith(owned(h, '1')), { prune: true });
    expect(actionable(p)).toEqual([]);
  });
});

describe('govops/ignore-fields', () => {
  it('parses and checks paths: config fields of integrations, not credentials; plain webhook fields', () => {
    expect(splitIgnoreFields(' config.port, config.audit.enabled ,,config.port')).toEqual(['config.audit.enabled', 'config.port']);
    expect(ignoreFieldProblem('Integration', 'config.port', ignoreFieldFacts())).toBeUndefined();
    expect(ignoreFieldProblem('Integration', 'config.password', ignoreFieldFacts())).toMatch(/is a credential/);
    expect(ignoreFieldProblem('Integration', 'config.okta.password', ignoreFieldFacts())).toMatch(/is a credential/);
    expect(ignoreFieldProblem('Integration', 'autoBootstrap', ignoreFieldFacts())).toMatch(/name a field inside config/);
    expect(ignoreFieldProblem('Webhook', 'global', ignoreFieldFacts())).toBeUndefined();
    expect(ignoreFieldProblem('Webhook', 'url', ignoreFieldFacts())).toMatch(/cannot be ignored on a webhook/);
    expect(ignoreFieldProblem('Webhook', 'secret', ignoreFieldFacts())).toMatch(/cannot be ignored on a webhook/);
    const spec = { type: 'cloud_warehouse', config: { okta: { password: { fromEnv: 'X' } }, port: 1 } };
    const issues = annotationIssues('Integration', spec, { 'govops/ignore-fields': 'config.okta, config.nosuch', 'govops/suspend': 'yes' });
    expect(issues.map((i) => `${i.severity}: ${i.message}`)).toEqual([
      expect.stringMatching(/^warning: govops\/ignore-fields: `config\.nosuch` is not a cloud_warehouse config field govops compares/),
      'error: govops/ignore-fields: `config.okta` holds a credential or a secret reference: the service masks credentials, so govops could not keep another team\'s value',
      'error: govops/suspend must be "true" or "false", got "yes"',
    ]);
  });

  it('ignored fields are never diffed; an update sends their live values, a create the manifest values', () => {
    const ig = { 'govops/ignore-fields': 'config.port, config.schema' };
    const a = integration('a', 'sql_analytics', { ...sqlConfig('a.example.com'), port: 1433 }, { annotations: ig });
    const live = liveOf(a, '1', 'enabled', { port: '1444', schema: 'theirs' });
    const state = stateWith(owned(a, '1'));
    const quiet = plan([a], [live], [], state);
    expect(quiet.changes[0]).toMatchObject({ action: 'noop', ignoredFields: ['config.port', 'config.schema'] });
    const changed = integration('a', 'sql_analytics', { ...sqlConfig('a.example.com'), port: 1433, warehouse: 'x', database: 'govern', username: 'other' }, { annotations: ig });
    const p = plan([changed], [live], [], state);
    expect(p.changes[0]!.action).toBe('update');
    expect(p.changes[0]!.changes.map((f) => f.path)).toEqual(['config.username']);
    const [sent] = preserveIgnoredFields([changed], p, { integrations: [live], webhooks: [] }, SHAPES);
    expect(sent!.kind === 'Integration' && sent!.body.config).toMatchObject({ port: 1444, schema: 'theirs', username: 'other' });
    // the manifest's own value is what was fingerprinted and recorded
    expect(sent!.specHash).toBe(changed.specHash);
    const created = plan([changed], [], [], stateWith());
    expect(preserveIgnoredFields([changed], created, { integrations: [], webhooks: [] }, SHAPES)[0]).toBe(changed);
  });

  it('a webhook replace keeps the live value of an ignored field', () => {
    const h = webhook('hook', { notificationType: ['modelCreated', 'modelDeleted'] }, { 'govops/ignore-fields': 'global' });
    const live = { ...liveWebhookOf(h, '7'), global: true, notificationType: ['modelCreated'] };
    const p = plan([h], [], [live], stateWith(owned(h, '7')));
    expect(p.changes[0]!.changes.map((f) => f.path)).toEqual(['notificationType']);
    const [sent] = preserveIgnoredFields([h], p, { integrations: [], webhooks: [live] }, SHAPES);
    expect(sent!.body).toMatchObject({ global: true, notificationType: ['modelCreated', 'modelDeleted'] });
  });
});

describe('saved plan facts', () => {
  const manifestOf = (name: string, httpPath: string): IntegrationManifest => ({
    apiVersion: 'govops/v1',
    kind: 'Integration',
    metadata: { name },
    spec: { type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'https://w.example.com', httpPath, token: { fromEnv: 'GOVOPS_SECRET_T' } } },
  });
  const desiredOf = (token: string, httpPath = '/p') =>
    integration('lake', 'lakehouse', { workspaceUrl: 'https://w.example.com', httpPath, token }, { secretPaths: ['spec.config.token'] });

  it('are fingerprints only, and name what changed: manifest, secret, state, live field', () => {
    const d = desiredOf('tok-1', '/new');
    const live = liveOf(desiredOf('tok-1', '/old'), '5');
    const state = stateWith(owned(desiredOf('tok-1', '/old'), '5'));
    const p = plan([d], [live], [], state);
    const input = { manifests: [manifestOf('lake', '/new')], desired: [d], state, live: { integrations: [live], webhooks: [] }, shapes: SHAPES, hashing: HASH };
    const facts = planFacts(p, input);
    const text = JSON.stringify(facts);
    expect(text).not.toContain('tok-1');
    expect(text).not.toContain('/new');
    expect(Object.keys(facts.live['Integration/lake']!.fields!)).toContain('config.httpPath');
    expect(compareFacts(facts, planFacts(p, input))).toEqual([]);
    expect(comparePlans(p, p)).toEqual([]);

    const rotated = desiredOf('tok-2', '/new');
    expect(compareFacts(facts, planFacts(p, { ...input, desired: [rotated] }))).toEqual(['secret config.token of Integration/lake changed (its fingerprint differs)']);
    expect(compareFacts(facts, planFacts(p, { ...input, manifests: [manifestOf('lake', '/newer')] }))).toEqual(['manifest Integration/lake changed']);
    const drifted = { ...live, config: { ...live.config, httpPath: '/by-hand' } };
    expect(compareFacts(facts, planFacts(p, { ...input, live: { integrations: [drifted], webhooks: [] } }))).toEqual([
      'Integration/lake (id 5) changed in the service since the plan: config.httpPath',
    ]);
    // normalised alike: the service echoing the port as a string, or a field it invented, is no change
    const echoed = { ...live, config: { ...live.config, port: '443', invented: true } };
    expect(compareFacts(facts, planFacts(p, { ...input, live: { integrations: [echoed], webhooks: [] } }))).toEqual([]);
    expect(compareFacts(facts, planFacts(p, { ...input, live: { integrations: [], webhooks: [] } }))).toEqual(['Integration/lake (id 5) is gone from the service']);
    const other = { ...state, resources: [{ ...state.resources[0]!, updatedAt: '2027-01-01T00:00:00.000Z' }] };
    expect(compareFacts(facts, planFacts(p, { ...input, state: other }))).toEqual(['govops state of Integration/lake changed since the plan (another apply?)']);
    const rekeyed = { ...state, fingerprintKey: 'f'.repeat(64) };
    expect(compareFacts(facts, planFacts(p, { ...input, state: rekeyed }))[0]).toMatch(/not the one the plan was made with/);
  });
});
