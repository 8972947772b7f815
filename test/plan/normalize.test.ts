/** Both sides normalised before diffing: a plan is a no-op whenever nothing differs, whatever the service echoes. */
import { describe, expect, it } from 'vitest';
import { toLiveIntegration } from '../../src/api/normalize.js';
import type { LiveIntegration } from '../../src/api/types.js';
import { planChanges } from '../../src/plan/planner.js';
import { renderMarkdown } from '../../src/plan/render-markdown.js';
import { renderText } from '../../src/plan/render-text.js';
import { comparable } from '../../src/plan/shape.js';
import type { DesiredResource } from '../../src/plan/types.js';
import type { ManagedResource } from '../../src/state/types.js';
import { SHAPES, integration, liveWebhookOf, owned, sqlConfig, stateWith, webhook } from './fixtures.js';

const plan = (desired: DesiredResource[], integrations: LiveIntegration[], resources: ManagedResource[], options = {}) =>
  planChanges({ shapes: SHAPES, desired, live: { integrations, webhooks: [] }, state: stateWith(...resources), options: { prune: false, allowReplace: false, ...options } });

const live = (type: string, config: Record<string, unknown>, id: unknown = '1', autoBootstrap = true): LiveIntegration =>
  toLiveIntegration({ id, status: 'enabled', validationResults: { status: 'passed', validationTests: [] }, type, autoBootstrap, config });

const sqlLive = (extra: Record<string, unknown> = {}) => ({ host: 'sql.example.com', database: 'govern', schema: 'views', username: '********', password: '********', ...extra });

describe('normalisation before diffing', () => {
  const d = integration('sql', 'sql_analytics', sqlConfig());
  const mine = owned(d, '1');

  it.each([
    ['defaults omitted', sqlLive()],
    ['defaults filled', sqlLive({ port: 1433, metadataDelimiters: { hashDelimiter: '|', hashKeyDelimiter: ':', arrayDelimiter: ',' }, impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION' } })],
    ['unset fields as null', sqlLive({ port: null, connectArgs: null, impersonation: null, metadataDelimiters: { hashDelimiter: null } })],
    ['an empty value for a field without default', sqlLive({ connectArgs: '' })],
    ['fields govops does not know, top level and nested', sqlLive({ timeoutSeconds: 30, impersonation: { enabled: false, lastSync: 'x' } })],
    ['a number as a numeric string', sqlLive({ port: '1433' })],
    ['credentials omitted instead of masked', { host: 'sql.example.com', database: 'govern', schema: 'views' }],
  ])('%s: no change', (_name, config) => {
    const p = plan([d], [live('sql_analytics', config)], [mine]);
    expect(p.changes[0]).toMatchObject({ action: 'noop', changes: [] });
  });

  it('ids are equal whether the service sends a number or a string', () => {
    const p = plan([d], [live('sql_analytics', sqlLive(), 1)], [mine]);
    expect(p.changes[0]).toMatchObject({ action: 'noop', liveId: '1', adopt: false });
  });

  it('a real difference is still one (and shown with the live value as the service means it)', () => {
    const p = plan([d], [live('sql_analytics', sqlLive({ port: '1500', impersonation: { enabled: true } }))], [mine]);
    expect(p.changes[0]!.changes).toEqual([
      { path: 'config.impersonation.enabled', before: true, after: false, sensitive: false, forcesReplace: false },
      { path: 'config.port', before: 1500, after: 1433, sensitive: false, forcesReplace: false },
    ]);
  });

  it('order-free lists are sets; other values keep their order', () => {
    const cfg = { host: 'wh.example.com', warehouse: 'W', database: 'D', authenticationType: 'keyPair', privateKey: 'k', userRolePattern: { exclude: ['A', 'B'] }, workspaces: { enabled: true, warehouses: ['X', 'Y'] } };
    const w = integration('wh', 'cloud_warehouse', cfg, { autoBootstrap: false });
    const l = live('cloud_warehouse', { ...cfg, privateKey: '********', userRolePattern: { exclude: ['B', 'A', 'B'] }, workspaces: { enabled: true, warehouses: ['Y', 'X'] } }, '2', false);
    expect(plan([w], [l], [owned(w, '2')]).changes[0]!.action).toBe('noop');
    expect(comparable(SHAPES, 'cloud_warehouse', { userRolePattern: { exclude: ['b', 'a'] } }).userRolePattern).toEqual({ exclude: ['a', 'b'] });
  });

  it('a workspace URL is compared by host: `https://h/` and `h` are the same workspace', () => {
    const lake = integration('lake', 'lakehouse', { workspaceUrl: 'Lake.example.com', httpPath: '/p', token: 't' });
    const l = live('lakehouse', { workspaceUrl: 'https://lake.example.com/', httpPath: '/p', token: '********' });
    expect(plan([lake], [l], []).changes[0]).toMatchObject({ action: 'adopt', changes: [] });
    expect(plan([lake], [l], [owned(lake, '1')]).changes[0]!.action).toBe('noop');
    // the manifest moved to another workspace: the integration govops recorded at id 1 is replaced
    const was = integration('lake', 'lakehouse', { workspaceUrl: 'https://other.example.com/', httpPath: '/p', token: 't' });
    const other = live('lakehouse', { workspaceUrl: 'https://other.example.com/', httpPath: '/p', token: '********' });
    expect(plan([lake], [other], [owned(was, '1')]).changes[0]).toMatchObject({ action: 'replace', changes: [{ path: 'config.workspaceUrl', before: 'other.example.com', after: 'lake.example.com' }] });
  });

  it('an absent object equals the object of its defaults', () => {
    const lake = integration('lake', 'lakehouse', { workspaceUrl: 'lake.example.com', httpPath: '/p', token: 't' });
    const l = live('lakehouse', { workspaceUrl: 'lake.example.com', httpPath: '/p', token: '********', groupPattern: { deny: 'service_exemption_group' } });
    expect(plan([lake], [l], [owned(lake, '1')]).changes[0]!.action).toBe('noop');
  });
});

describe('secrets: compared by value, by fingerprint, or not at all', () => {
  const d = integration('sql', 'sql_analytics', sqlConfig('sql.example.com', 'pw-one'));

  it('a rotated secret is a sensitive change even when the service omits credentials', () => {
    const before = owned(integration('sql', 'sql_analytics', sqlConfig('sql.example.com', 'pw-zero')), '1');
    const p = plan([d], [live('sql_analytics', { host: 'sql.example.com', database: 'govern', schema: 'views' })], [before]);
    expect(p.changes[0]).toMatchObject({ action: 'update', changes: [{ path: 'config.password', sensitive: true }] });
  });

  it('a secret govops sent that the manifest no longer has is a change', () => {
    const withToken = integration('col', 'columnar_warehouse', { host: 'c.example.com', database: 'd', authenticationType: 'accessKey', databaseUser: 'u', accessKeyId: 'a', secretKey: 's', sessionToken: 't' }, { autoBootstrap: false });
    const without = integration('col', 'columnar_warehouse', { host: 'c.example.com', database: 'd', authenticationType: 'accessKey', databaseUser: 'u', accessKeyId: 'a', secretKey: 's' }, { autoBootstrap: false });
    const l = live('columnar_warehouse', { host: 'c.example.com', database: 'd', authenticationType: 'accessKey', databaseUser: 'u', accessKeyId: 'a', secretKey: '********', sessionToken: '********' }, '1', false);
    const p = plan([without], [l], [owned(withToken, '1')]);
    expect(p.changes[0]).toMatchObject({ action: 'update', changes: [{ path: 'config.sessionToken', sensitive: true }] });
    expect(plan([withToken], [l], [owned(withToken, '1')]).changes[0]!.action).toBe('noop');
  });

  it('a secret added to an owned resource (no fingerprint in state) is a change, not "cannot be compared"', () => {
    const without = integration('col', 'columnar_warehouse', { host: 'c.example.com', database: 'd', authenticationType: 'accessKey', databaseUser: 'u', accessKeyId: 'a', secretKey: 's' }, { autoBootstrap: false });
    const withToken = integration('col', 'columnar_warehouse', { host: 'c.example.com', database: 'd', authenticationType: 'accessKey', databaseUser: 'u', accessKeyId: 'a', secretKey: 's', sessionToken: 't' }, { autoBootstrap: false });
    const l = live('columnar_warehouse', { host: 'c.example.com', database: 'd', authenticationType: 'accessKey', databaseUser: 'u', accessKeyId: 'a' }, '1', false);
    const p = plan([withToken], [l], [owned(without, '1')]);
    expect(p.changes[0]).toMatchObject({ action: 'update', changes: [{ path: 'config.sessionToken', sensitive: true }] });
    expect(p.changes[0]!.notComparable).toBeUndefined();
  });

  it('without state: adopted, credentials cannot be compared (not counted), rendered in their own category', () => {
    const p = planChanges({
      shapes: SHAPES,
      desired: [d, webhook('hook', { secret: 's' })],
      live: { integrations: [live('sql_analytics', sqlLive(), 5)], webhooks: [liveWebhookOf(webhook('hook', { secret: 's' }), '9')] },
      state: stateWith(),
      options: { prune: false, allowReplace: false },
    });
    expect(p.summary).toEqual({ create: 0, update: 0, replace: 0, delete: 0, adopt: 2, noop: 0 });
    expect(p.changes.map((c) => [c.name, c.action, c.notComparable])).toEqual([
      ['sql', 'adopt', { paths: ['config.password', 'config.username'], handling: 'record' }],
      ['hook', 'adopt', { paths: ['secret'], handling: 'record' }],
    ]);
    const text = renderText(p);
    expect(text).toContain('? config.password, config.username: cannot be compared (masked by the service, no fingerprint in govops state): recorded in govops state as in the manifest, not sent');
    expect(text).toContain('Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 2 to adopt.');
    expect(text).toContain('2 resources have credentials that cannot be compared (marked ?): not counted as changes.');
    expect(renderMarkdown(p)).toContain('cannot be compared: `config.password`, `config.username` (record)');
  });

  it('--resend-secrets: an update (integration) or a replace (webhook) sending them once', () => {
    const hook = webhook('hook', { secret: 's' });
    const p = planChanges({
      shapes: SHAPES,
      desired: [d, hook],
      live: { integrations: [live('sql_analytics', sqlLive())], webhooks: [liveWebhookOf(hook, '9')] },
      state: stateWith(),
      options: { prune: false, allowReplace: true, resendSecrets: true },
    });
    expect(p.changes.map((c) => [c.name, c.action, c.notComparable?.handling])).toEqual([
      ['sql', 'update', 'resend'],
      ['hook', 'replace', 'resend'],
    ]);
  });
});
