/**
 * Pure parts of the preview: the pull request's change per resource, the host rule of dry runs, the
 * live view (PR-caused vs drift), and the Markdown: escaping, warnings on top, the size limit.
 */
import { describe, expect, it } from 'vitest';
import type { LoadedManifest, Manifest } from '../../src/manifests/types.js';
import { toPlanChange, type PlanChange, type ResourceChange } from '../../src/plan/types.js';
import { dryRunRequest } from '../../src/preview/dry-run.js';
import { driftEntries, touchedResources } from '../../src/preview/live-view.js';
import { manualPhases, scriptLanguage, withPlaceholders } from '../../src/preview/manual-steps.js';
import { ackOfManifest } from '../../src/preview/manual-ack.js';
import { renderManualAck } from '../../src/preview/render-manual.js';
import { manualStepToken } from '../../src/reconcile/manual-step-token.js';
import type { IntegrationManifest } from '../../src/manifests/types.js';
import { diffRevisions } from '../../src/preview/pr-diff.js';
import { renderPreview } from '../../src/preview/render.js';
import { desiredWithUnknowns } from '../../src/preview/unknown-secrets.js';
import { resolveAllSecrets } from '../../src/manifests/secrets.js';
import { MASK } from '../../src/service/kinds.js';
import type { GovopsState } from '../../src/state/types.js';
import type { LiveIntegration } from '../../src/api/types.js';
import { finish } from '../../src/preview/result.js';
import { checkTargets } from '../../src/preview/targets.js';
import { PREVIEW_FORMAT_VERSION, PREVIEW_MARKER, type PreviewResource, type PreviewResult } from '../../src/preview/types.js';
import { planOf as plan } from '../helpers/plans.js';

const at = { file: 'm/x.yaml', line: 1, column: 1 };
const loaded = (manifest: Manifest): LoadedManifest => ({ manifest, source: at, dir: '/tmp', locate: () => at });
const sql = (name: string, config: Record<string, unknown>, labels?: Record<string, string>): LoadedManifest =>
  loaded({
    apiVersion: 'govops/v1',
    kind: 'Integration',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { type: 'sql_analytics', autoBootstrap: false, config },
  });
const hook = (name: string, url: string): LoadedManifest =>
  loaded({
    apiVersion: 'govops/v1',
    kind: 'Webhook',
    metadata: { name },
    spec: { url, global: false, notificationType: ['modelCreated'], actionType: 'triggered' },
  } as Manifest);

describe('diffRevisions: what the pull request changes', () => {
  it('added, removed, changed; values shown except secrets; references by name; untouched not listed', () => {
    const base = [
      sql('a', { host: 'a.example.com', port: 1433, password: 'pw-SECRET-1', username: { fromEnv: 'U1' } }),
      sql('gone', { host: 'g.example.com' }),
      sql('same', { host: 's.example.com' }),
    ];
    const head = [
      sql('a', { host: 'a.example.com', port: 1434, password: 'pw-SECRET-2', username: { fromEnv: 'U2' }, impersonation: { enabled: true } }, { team: 'x' }),
      sql('new', { host: 'n.example.com', password: 'pw-SECRET-4' }),
      sql('same', { host: 's.example.com' }),
    ];
    const diff = diffRevisions(base, head);
    expect(diff.map((c) => `${c.change} ${c.name}`)).toEqual(['changed a', 'removed gone', 'added new']);
    expect(diff[0]!.fields).toEqual([
      { path: 'metadata.labels', after: { team: 'x' }, sensitive: false },
      { path: 'spec.config.impersonation', after: { enabled: true }, sensitive: false },
      { path: 'spec.config.password', sensitive: true },
      { path: 'spec.config.port', before: 1433, after: 1434, sensitive: false },
      { path: 'spec.config.username', before: { fromEnv: 'U1' }, after: { fromEnv: 'U2' }, sensitive: false },
    ]);
    expect(diff[2]!.fields).toContainEqual({ path: 'spec.config.host', after: 'n.example.com', sensitive: false });
    expect(diff[2]!.fields).toContainEqual({ path: 'spec.config.password', sensitive: true });
    expect(JSON.stringify(diff)).not.toContain('SECRET');
  });

  it('an Integration renamed with the same identity (host) is "renamed"; a Webhook rename is a removal and an addition', () => {
    const diff = diffRevisions(
      [sql('old-name', { host: 'DB.example.com', port: 1 }), hook('w1', 'https://r.example.com/h')],
      [sql('new-name', { host: 'db.example.com', port: 2 }), hook('w2', 'https://r.example.com/h')],
    );
    expect(diff.map((c) => `${c.resourceKind} ${c.change} ${c.name}${c.renamedFrom ? ` from ${c.renamedFrom}` : ''}`)).toEqual([
      'Integration renamed new-name from old-name',
      'Webhook removed w1',
      'Webhook added w2',
    ]);
    expect(diff[0]!.fields).toEqual([{ path: 'spec.config.host', before: 'DB.example.com', after: 'db.example.com', sensitive: false }, { path: 'spec.config.port', before: 1, after: 2, sensitive: false }]);
  });

  it('a Webhook whose metadata.name changed and whose name in the service (spec.name, else metadata.name) did not is "renamed"', () => {
    const named = (name: string, serviceName: string): LoadedManifest => {
      const m = hook(name, 'https://r.example.com/h');
      return loaded({ ...m.manifest, spec: { name: serviceName, ...(m.manifest.spec as object) } } as Manifest);
    };
    const diff = diffRevisions([named('slack', 'Slack Alerts'), hook('w1', 'https://r.example.com/h')], [named('slack-alerts', 'Slack Alerts'), named('w2', 'w1')]);
    expect(diff.map((c) => `${c.resourceKind} ${c.change} ${c.name}${c.renamedFrom ? ` from ${c.renamedFrom}` : ''}`)).toEqual([
      'Webhook renamed slack-alerts from slack',
      'Webhook renamed w2 from w1',
    ]);
    expect(diff[0]!.fields).toEqual([]);
    expect(diff[1]!.fields).toEqual([{ path: 'spec.name', after: 'w1', sensitive: false }]);
  });

  it('two removed integrations with one identity are not paired with an added one (ambiguous)', () => {
    const diff = diffRevisions([sql('a', { host: 'h' }), sql('b', { host: 'h' })], [sql('c', { host: 'h' })]);
    expect(diff.map((c) => `${c.change} ${c.name}`)).toEqual(['removed a', 'removed b', 'added c']);
  });
});

describe('checkTargets: no secret to a host the base revision does not use', () => {
  const base = { config: { host: 'db.example.com', password: { fromEnv: 'GOVOPS_SECRET_DB' } } };
  it('same host and same reference: allowed; the live host counts too', () => {
    expect(checkTargets({ sends: base.config, head: base, base, live: { host: 'DB.example.com.', password: '********' }, allowNewTargets: false })).toEqual({ allowed: true });
    expect(checkTargets({ sends: base.config, head: base, base, live: { host: 'other.example.com' }, allowNewTargets: false })).toMatchObject({ allowed: false, code: 'target-changed' });
  });
  it('a changed host, URL scheme or connection string is refused', () => {
    const head = (config: Record<string, unknown>) => ({ sends: config, head: { config }, base, allowNewTargets: true });
    expect(checkTargets(head({ ...base.config, host: 'evil.example.net' }))).toMatchObject({ allowed: false, code: 'target-changed', reason: expect.stringContaining('config.host') });
    expect(checkTargets(head({ ...base.config, connectArgs: 'Server=evil.example.net' }))).toMatchObject({ allowed: false, reason: expect.stringContaining('config.connectArgs') });
    const lake = { config: { workspaceUrl: 'https://lake.example.com/', token: { fromEnv: 'T' } } };
    expect(checkTargets({ sends: lake.config, head: lake, base: lake, allowNewTargets: false })).toEqual({ allowed: true });
    const http = { config: { ...lake.config, workspaceUrl: 'http://lake.example.com' } };
    expect(checkTargets({ sends: http.config, head: http, base: lake, allowNewTargets: false })).toMatchObject({ allowed: false });
  });
  it('a URL another parser reads with another host is refused (Python urlsplit takes a backslash as part of the userinfo)', () => {
    const lake = { config: { workspaceUrl: 'https://lake.example.com/', token: { fromEnv: 'GOVOPS_SECRET_T' } } };
    // WHATWG (Node) reads the host lake.example.com; Python's urlsplit reads evil.example.net, where the token would go
    for (const url of ['https://lake.example.com\\@evil.example.net/', 'https://lake.example.com\\\\@evil.example.net', 'https://lake.example.com\t\\@evil.example.net']) {
      const head = { config: { ...lake.config, workspaceUrl: url } };
      expect(checkTargets({ sends: head.config, head, base: lake, allowNewTargets: true })).toMatchObject({ allowed: false, code: 'target-changed' });
    }
    // a path that differs is the same host for every parser
    const path = { config: { ...lake.config, workspaceUrl: 'https://LAKE.example.com/other?x=1#y' } };
    expect(checkTargets({ sends: path.config, head: path, base: lake, allowNewTargets: false })).toEqual({ allowed: true });
  });
  it('an httpPath that is no plain path on the host (joined to the workspace URL it names another host) is refused', () => {
    const lake = { config: { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1.0/warehouses/a1', token: { fromEnv: 'GOVOPS_SECRET_T' } } };
    // `workspaceUrl + httpPath` or a URL join (Python urljoin, WHATWG) reads evil.example.net as the host
    for (const httpPath of ['//evil.example.net/sql', '\\\\evil.example.net/sql', '@evil.example.net/sql', '.evil.example.net/sql', 'https://evil.example.net/sql', '/\t/evil.example.net/sql']) {
      const head = { config: { ...lake.config, httpPath } };
      expect(checkTargets({ sends: head.config, head, base: lake, allowNewTargets: true }), httpPath).toMatchObject({ allowed: false, code: 'target-changed' });
    }
    // another warehouse on the same host: same host, same owner
    const other = { config: { ...lake.config, httpPath: '/sql/1.0/warehouses/b2' } };
    expect(checkTargets({ sends: other.config, head: other, base: lake, allowNewTargets: false })).toEqual({ allowed: true });
  });
  it('a reference the base does not give this resource is not sent', () => {
    const moved = { config: { host: 'db.example.com', password: { fromEnv: 'GOVOPS_SECRET_OTHER' } } };
    expect(checkTargets({ sends: moved.config, head: moved, base, allowNewTargets: true })).toMatchObject({ allowed: false, code: 'secret-moved', reason: expect.stringContaining('fromEnv: GOVOPS_SECRET_OTHER') });
  });
  it('a new resource only with --dry-run-new-targets; nothing of the operator sent: always allowed', () => {
    expect(checkTargets({ sends: base.config, head: base, allowNewTargets: false })).toMatchObject({ allowed: false, code: 'new-target' });
    expect(checkTargets({ sends: base.config, head: base, allowNewTargets: true })).toEqual({ allowed: true });
    const literal = { config: { host: 'anywhere.example.net', password: 'written-in-the-pr' } };
    expect(checkTargets({ sends: literal.config, head: literal, allowNewTargets: false })).toEqual({ allowed: true });
  });
});

describe('dryRunRequest', () => {
  const allowed = { allowed: true } as const;
  const body = { type: 'lakehouse' as const, autoBootstrap: true, config: {} };
  it('POST for a create, PUT for an update, DELETE for a delete or the delete half of a replace; nothing for no-op', () => {
    expect(dryRunRequest({ action: 'create', body, unknownRefs: [], targets: allowed })).toMatchObject({ method: 'POST', path: '/integrations?dryRun=true' });
    expect(dryRunRequest({ action: 'update', liveId: '7', body, unknownRefs: [], targets: allowed })).toMatchObject({ method: 'PUT', path: '/integrations/7?dryRun=true' });
    expect(dryRunRequest({ action: 'replace', liveId: '7', deletePayload: { a: 1 }, unknownRefs: [], targets: allowed })).toMatchObject({ method: 'DELETE', payload: { a: 1 } });
    expect(dryRunRequest({ action: 'noop', liveId: '7', unknownRefs: [], targets: allowed })).toBeUndefined();
  });
  it('skipped, with the reason: offline, blocked, secrets missing, target refused', () => {
    expect(dryRunRequest({ action: 'create', body, unknownRefs: [], targets: allowed, offline: 'fork' })).toMatchObject({ status: 'skipped', reason: 'offline: fork' });
    expect(dryRunRequest({ action: 'update', liveId: '1', body, blocked: 'x', unknownRefs: [], targets: allowed })).toMatchObject({ status: 'skipped', reason: expect.stringContaining('blocked') });
    expect(dryRunRequest({ action: 'update', liveId: '1', body, unknownRefs: ['fromEnv: T'], targets: allowed })).toMatchObject({ status: 'skipped', reason: expect.stringContaining('fromEnv: T') });
    expect(dryRunRequest({ action: 'update', liveId: '1', body, unknownRefs: [], targets: { allowed: false, code: 'target-changed', reason: 'moved' } })).toMatchObject({ status: 'skipped', reason: 'moved' });
  });
});

describe('manual steps', () => {
  it('phases per action and kind; placeholders instead of secret values; language from the script', () => {
    expect(manualPhases('create', 'sql_analytics', false)).toEqual(['initial-create', 'create']);
    expect(manualPhases('create', 'cloud_warehouse', false)).toEqual(['create']);
    expect(manualPhases('replace', 'columnar_warehouse', false)).toEqual(['delete', 'initial-create', 'create']);
    expect(manualPhases('update', 'lakehouse', false)).toEqual(['edit']);
    expect(manualPhases('delete', 'lakehouse', false)).toEqual([]);
    expect(manualPhases('create', 'sql_analytics', true)).toEqual([]);
    expect(withPlaceholders({ password: { fromEnv: 'P' }, nested: [{ fromFile: 'k' }], host: 'h' })).toEqual({
      password: '<secret fromEnv: P>',
      nested: ['<secret fromFile: k>'],
      host: 'h',
    });
    expect(scriptLanguage('#!/usr/bin/env bash\necho')).toBe('bash');
    expect(scriptLanguage('CREATE USER x;')).toBe('sql');
  });

  it('an acknowledgment the pull request itself writes is shown as such, not as proof that the scripts ran', () => {
    const config = { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/2', token: { fromEnv: 'LAKE_TOKEN' } };
    const line = `edit:${manualStepToken('edit', 'lakehouse', config)}`;
    const lake = (annotation?: string): IntegrationManifest => ({
      apiVersion: 'govops/v1',
      kind: 'Integration',
      metadata: { name: 'lake', ...(annotation ? { annotations: { 'govops/manual-step': annotation } } : {}) },
      spec: { type: 'lakehouse', autoBootstrap: false, config },
    });
    const steps = [{ phase: 'edit' as const, command: 'govops scripts lake --phase edit' }];
    // added by the pull request (the base had none, or another one)
    for (const base of [undefined, lake(), lake('edit:00000000')]) {
      const ack = ackOfManifest(steps, lake(line), 'require', { base });
      expect(ack).toMatchObject({ status: 'acknowledged', fromPullRequest: true });
      expect(renderManualAck(ack).join('\n')).toContain('✅ **Acknowledged by this pull request**');
    }
    // the base revision carries it already (a change made for another reason): acknowledged as before
    const kept = ackOfManifest(steps, lake(line), 'require', { base: lake(`create:12345678 ${line}`) });
    expect(kept).toEqual({ status: 'acknowledged', annotation: `govops/manual-step: "${line}"` });
    expect(renderManualAck(kept).join('\n')).toContain('✅ **Acknowledged** in the manifest');
    // without --base there is no pull request to tell apart
    expect(ackOfManifest(steps, lake(line), 'require')).not.toHaveProperty('fromPullRequest');
  });
});

const change = (name: string, over: Partial<ResourceChange> = {}): PlanChange =>
  toPlanChange({
    resourceKind: 'Integration',
    name,
    action: 'update',
    adopt: false,
    liveId: `id-${name}`,
    integrationType: 'sql_analytics',
    changes: [],
    reasons: [],
    ...over,
  });

describe('live view', () => {
  const pr = diffRevisions([sql('a', { host: 'h', port: 1 })], [sql('a', { host: 'h', port: 2 })]);
  it('live changes are marked as caused by the pull request or not (drift the merge also applies)', () => {
    const head = plan([
      change('a', {
        liveId: '4',
        changes: [
          { path: 'config.port', before: 1, after: 2, sensitive: false, forcesReplace: false },
          { path: 'config.schema', before: 'x', after: 'y', sensitive: false, forcesReplace: false },
        ],
      }),
    ]);
    const [r] = touchedResources(pr, head, { integrations: [{ id: '4', status: 'editError' } as never], webhooks: [] });
    expect(r!.live).toMatchObject({ action: 'update', id: '4', status: 'editError' });
    expect(r!.live!.changes.map((f) => `${f.path}:${f.fromPr}`)).toEqual(['config.port:true', 'config.schema:false']);
  });
  it('drift: untouched resources whole; a touched one only where the pull request does not change it', () => {
    const base = plan([
      change('a', { changes: [{ path: 'config.port', before: 3, after: 1, sensitive: false, forcesReplace: false }, { path: 'config.schema', before: 'x', after: 'y', sensitive: false, forcesReplace: false }] }),
      change('b', { changes: [{ path: 'config.port', before: 5, after: 6, sensitive: false, forcesReplace: false }] }),
      change('c', { action: 'noop' }),
      // unapplied: the base declares it, the service does not have it yet
      change('d', { action: 'create', liveId: undefined, changes: [{ path: 'type', after: 'sql_analytics', sensitive: false, forcesReplace: false }] }),
    ]);
    const drift = driftEntries(base, pr);
    expect(drift.map((d) => `${d.name}:${d.action}:${d.touched}:${d.changes.map((f) => f.path).join(',')}`)).toEqual([
      'a:update:true:config.schema',
      'b:update:false:config.port',
      'd:create:false:type',
    ]);
  });
});

function bigResult(n: number): PreviewResult {
  const resources: PreviewResource[] = [];
  for (let i = 0; i < n; i++) {
    const name = `integration-${String(i).padStart(4, '0')}`;
    resources.push({
      resourceKind: 'Integration',
      name,
      integrationType: 'sql_analytics',
      change: 'changed',
      source: { file: `m/${name}.yaml`, line: 1, column: 1 },
      fields: [{ path: 'spec.config.port', before: 1433, after: 1434, sensitive: false }],
      live: {
        action: i % 10 === 0 ? 'replace' : 'update',
        adopt: false,
        id: String(i),
        status: 'enabled',
        reasons: [],
        changes: [{ path: 'config.port', before: 1433, after: 1434, sensitive: false, forcesReplace: false, fromPr: true }],
        forcesReplace: [],
      },
      dryRun:
        i === 1999
          ? { status: 'failed', request: `PUT /integrations/${i}?dryRun=true`, tests: [{ name: 'Initial Validation: Basic Connection Test', status: 'failed', result: [{ message: 'no route' }] }] }
          : { status: 'passed', request: `PUT /integrations/${i}?dryRun=true`, tests: [{ name: 'Initial Validation: Basic Connection Test', status: 'passed', result: [] }] },
    });
  }
  return finish({
    formatVersion: PREVIEW_FORMAT_VERSION,
    marker: PREVIEW_MARKER,
    mode: 'live',
    revision: 'abc1234',
    base: { ref: 'main', mergeBase: 'f'.repeat(40), files: resources.map((r) => ({ status: 'M', file: r.source!.file })) },
    valid: true,
    diagnostics: [],
    unknownSecrets: [],
    summary: { pr: { added: 0, changed: 0, renamed: 0, removed: 0 }, drift: 0, manualSteps: 0 },
    warnings: [],
    resources,
    drift: resources.map((r) => ({ resourceKind: 'Integration', name: r.name, action: 'update', touched: false, reasons: [], changes: [{ path: 'config.schema', before: 'a', after: 'b', sensitive: false, forcesReplace: false }] })),
    changed: false,
    exitCode: 0,
  });
}

describe('renderPreview', () => {
  it('starts with the marker; table cells cannot break the table or inject HTML; fences stay closed', () => {
    const r = finish({
      ...bigResult(0),
      valid: false,
      diagnostics: [{ file: 'm/a|b.yaml', line: 2, column: 3, kind: 'Webhook', name: 'w', severity: 'error', message: 'bad ``` value' }],
      base: { ref: 'main', mergeBase: 'f'.repeat(40), files: [{ status: 'A', file: 'm/<img src=x>|.yaml' }] },
    });
    const md = renderPreview(r);
    expect(md.split('\n')[0]).toBe(PREVIEW_MARKER);
    expect(md).toContain('| added | m/&lt;img src=x&gt;\\|.yaml |');
    expect(md).toContain("m/a|b.yaml:2:3: Webhook/w: bad ''' value");
    expect(md).toContain('_No plan was made._');
    expect(md.match(/```/g)!.length % 2).toBe(0);
    expect(r.exitCode).toBe(1);
  });

  it('2,000 touched resources: under 65,536 characters, the summary whole, warnings first, details shortened with a note', () => {
    const r = bigResult(2000);
    const md = renderPreview(r);
    expect(md.length).toBeLessThan(65_536);
    expect(md.startsWith(`${PREVIEW_MARKER}\n### govops preview\n`)).toBe(true);
    // the summary is never shortened
    expect(md).toContain('| **This pull request** | 2000 changed |');
    expect(md).toContain('| **Merging it does** | 1800 to update · 200 to replace |');
    expect(md).toContain('| **Dry runs** | 1999 ✅ passed · 1 ❌ failed |');
    expect(md).toContain('| **Drift** | 2000 resources differ from the base revision');
    // the failed dry run is the first warning and its details are shown (failures first)
    const warnings = md.indexOf('#### Warnings');
    expect(warnings).toBeGreaterThan(md.indexOf('| **Dry runs**'));
    expect(md.slice(warnings).split('\n')[2]).toBe('- ❌ **Integration/integration-1999**: the dry run failed: Initial Validation: Basic Connection Test');
    expect(md).toContain('<details open><summary><b>Integration/integration-1999</b>');
    expect(md).toMatch(/- … and \d+ more warnings \(see the JSON output\)/);
    expect(md).toMatch(/\| \| … \d+ more resources \(see the JSON output\) \|/);
    // every section keeps at least its short form
    expect(md).toContain('Drift: 2000 resources in the service differ from the base revision');
    expect(md).toContain('Manifest files changed since <code>main</code>: 2000');
    expect(md.match(/```/g)!.length % 2).toBe(0);
    expect((md.match(/<details/g) ?? []).length).toBe((md.match(/<\/details>/g) ?? []).length);
  });

  it('a small preview is shown whole, with every section', () => {
    const md = renderPreview(bigResult(3));
    expect(md).not.toContain('more resources');
    expect(md).toContain('| `~` | Integration/integration-0000 | sql_analytics | changed (1 field) | replace (delete, then create) (id 0, enabled) | ✅ passed |');
    expect(md).toContain('~ spec.config.port: 1433 -> 1434');
    expect(md).toMatch(/<details><summary>Drift: 3 resources[^\n]*<\/summary>\n\n```diff\n~ Integration\/integration-0000: update in place\n {4}~ config.schema: "a" -> "b"/);
  });
});

describe('desiredWithUnknowns', () => {
  it('an unresolved reference takes the value the service shows in clear for the resource govops owns, else a placeholder', () => {
    const manifest = (name: string): Manifest => ({
      apiVersion: 'govops/v1',
      kind: 'Integration',
      metadata: { name },
      spec: { type: 'cloud_warehouse', autoBootstrap: true, config: { host: { fromEnv: 'GOVOPS_SECRET_HOST' }, warehouse: 'WH', username: 'svc', password: { fromEnv: 'GOVOPS_SECRET_PW' } } },
    });
    const set = [loaded(manifest('owned')), loaded(manifest('new'))];
    const { resolved } = resolveAllSecrets(set, { env: {} });
    const state: GovopsState = {
      version: 1,
      fingerprintKey: 'ab'.repeat(32),
      resources: [{ kind: 'Integration', name: 'owned', id: '12', origin: 'created', specHash: '', secretFingerprints: {}, updatedAt: 'now' }],
    };
    const live = {
      integrations: [
        { id: '11', type: 'cloud_warehouse', status: 'enabled', autoBootstrap: true, config: { host: 'other.example.com' }, validationResults: [] },
        { id: '12', type: 'cloud_warehouse', status: 'enabled', autoBootstrap: true, config: { host: 'wh.example.com', password: MASK }, validationResults: [] },
      ] as unknown as LiveIntegration[],
      webhooks: [],
    };
    const { desired, unknown } = desiredWithUnknowns(set, resolved, state, live);
    const config = (i: number) => (desired[i]!.body as { config: Record<string, unknown> }).config;
    expect(config(0).host).toBe('wh.example.com'); // its live value: no difference because of the unknown
    expect(config(0).password).not.toBe(MASK); // masked: never taken as a value
    expect(config(1).host).not.toBe('other.example.com'); // not in state: nothing is known of it
    expect(unknown.map((u) => `${u.name} ${u.path}`).sort()).toEqual(['new config.host', 'new config.password', 'owned config.host', 'owned config.password']);
  });
});

describe('the preview summary of a change awaiting a manual step and blocked for another reason', () => {
  it('counts it once, as blocked (apply skips it as blocked; acknowledging the scripts would not let it through)', () => {
    const base = bigResult(1);
    const x = base.resources[0]!;
    const r = finish({
      ...base,
      resources: [{
        ...x,
        live: { ...x.live!, action: 'replace', blocked: 'replace needed (config.location not editable): run with --allow-replace', blockedCode: 'replace-not-allowed' },
        manualAck: { status: 'awaiting', reason: 'no annotation' },
      }],
    });
    expect(r.summary.blocked).toBe(1);
    expect(r.summary.awaitingManualStep).toBeUndefined();
  });
});
