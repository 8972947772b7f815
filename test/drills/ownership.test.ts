/**
 * Drills (issue 22): govops touches only what it owns. The built CLI (real processes) against the sandbox on
 * 127.0.0.1:
 * - a service that reuses ids: govops' webhook and integration are deleted outside, outsiders get their ids;
 *   `apply --prune` neither deletes nor replaces the outsiders, recreates its own;
 * - same-name webhooks govops did not create (another team's URL, another user's): reported, never deleted;
 * - the mass-deletion guard with deletes awaiting a manual step: refused whole, as with `--manual-steps trust`.
 * After each, a plan is a no-op (where the drill leaves nothing to do) and the service holds exactly one
 * govops resource per manifest.
 */
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { parseState } from '../../src/state/store.js';
import { runGovops, type CliResult } from '../helpers/cli.js';
import { dataSourceManifest, objectStoreManifest } from '../helpers/manifests.js';

let sandbox: SandboxHandle | undefined;
let dir: string | undefined;
const clients: ServiceClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

async function setup(behaviours: string[] = []) {
  sandbox = await startSandbox({ port: 0, transitionMs: 10, behaviours });
  dir = await mkdtemp(join(tmpdir(), 'govops-ownership-'));
  await mkdir(join(dir, 'm'));
  const sb = sandbox;
  const d = dir;
  const client = (token: string) => {
    const c = new ServiceClient({ baseUrl: sb.url, token, logger: silentLogger(), retries: 0 });
    clients.push(c);
    return c;
  };
  const admin = client(sb.adminToken);
  const user = client(sb.userToken);
  const govops = (...args: string[]): Promise<CliResult> =>
    runGovops(args, { cwd: d, env: { GOVOPS_URL: sb.url, GOVOPS_TOKEN: sb.adminToken, GOVOPS_LOG_LEVEL: 'warn', GOVOPS_SECRET_TOKEN: 'lake-token' } });
  const write = (name: string, text: string) => writeFile(join(d, 'm', `${name}.yaml`), text);
  const remove = (name: string) => unlink(join(d, 'm', `${name}.yaml`));
  const state = async () => parseState(await readFile(join(d, '.govops', 'state.json'), 'utf8'), 'state.json');
  const writes = () => sb.requests().filter((r) => r.method !== 'GET' && r.query.dryRun !== 'true').map((r) => `${r.method} ${r.path}`);
  return { sb, admin, user, govops, write, remove, state, writes };
}

const lake = (name: string, host: string, extra = '') => `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
${extra}spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: ${host}
    httpPath: /sql/1
    token: { fromEnv: GOVOPS_SECRET_TOKEN }
`;

const hook = (name: string, url = `https://hooks.example.com/${name}`) => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: ${url}
  global: false
  notificationType: [modelCreated]
  actionType: triggered
`;

const sql = (name: string) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: sql_analytics
  autoBootstrap: false
  config:
    host: ${name}.example.com
    database: governance
    schema: views
    username: svc
    password: { fromEnv: GOVOPS_SECRET_TOKEN }
`;

const ok = (r: CliResult): CliResult => {
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return r;
};

describe('drill: a service that reuses ids', () => {
  it('apply --prune never deletes or replaces an outsider that got a recorded id; a plan after it is a no-op', async () => {
    const w = await setup(['reuse-ids']);
    await w.write('a', lake('a', 'a.example.com'));
    await w.write('b', lake('b', 'b.example.com'));
    await w.write('wx', hook('wx-wh-0'));
    ok(await w.govops('apply', 'm'));
    const before = await w.state();
    const idOf = (name: string) => before.resources.find((r) => r.name === name)!.id;
    // a and b are created concurrently: which got 1 and which 2 is up to the order their creates arrived
    const bId = idOf('b');
    expect([idOf('a'), bId].sort()).toEqual(['1', '2']);
    expect(idOf('wx-wh-0')).toBe('1');
    // Someone removes govops' webhook and integration b; outsiders get their ids back.
    await w.admin.deleteWebhook('1');
    await w.admin.deleteIntegration(bId, undefined);
    await w.sb.finishTransitions();
    const outsiderHook = (await w.user.createWebhooks([{ name: 'theirs', url: 'https://team.example.com/in', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' }])).createdWebhooks[0]!;
    const outsider = await w.admin.createIntegration({ type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'c.example.com', httpPath: '/x', token: 't' } });
    expect([outsiderHook.id, outsider.id]).toEqual(['1', bId]);
    await w.sb.finishTransitions();
    // b's manifest is removed: prune
    await w.remove('b');
    w.sb.clearRequests();
    const pruned = ok(await w.govops('apply', 'm', '--prune', '--max-deletes', '3'));
    expect(w.writes()).toEqual(['POST /webhooks']);
    expect(pruned.stdout + pruned.stderr).toMatch(/recorded id 1 now holds another webhook/);
    expect(pruned.stdout + pruned.stderr).toContain(`Integration/b: the recorded id ${bId} now holds another integration`);
    // the outsiders survive, govops' webhook is back under a new id; state forgot b
    expect((await w.admin.getIntegration(bId)).config.workspaceUrl).toBe('c.example.com');
    const hooks = await w.admin.listWebhooks();
    expect(hooks.filter((h) => h.name === 'theirs').map((h) => h.id)).toEqual(['1']);
    expect(hooks.filter((h) => h.name === 'wx-wh-0')).toHaveLength(1);
    const after = await w.state();
    expect(after.resources.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(['Integration/a', 'Webhook/wx-wh-0']);
    // a plan afterwards is a no-op; exactly one resource per manifest
    w.sb.clearRequests();
    ok(await w.govops('plan', 'm', '--prune', '--detailed-exitcode'));
    expect(w.writes()).toEqual([]);
    const integrations = await w.admin.listIntegrations();
    expect(integrations.map((i) => i.config.workspaceUrl).sort()).toEqual(['a.example.com', 'c.example.com']);
  });
});

describe('drill: a service that reuses data-source ids', () => {
  it("apply --prune never deletes an outsider's data source that got a recorded id; the manifest's own is recreated; a plan after is a no-op", async () => {
    const w = await setup(['reuse-ids']);
    await w.write('raw', objectStoreManifest('raw', 's3://raw.example.com/base/'));
    await w.write('events', dataSourceManifest('events', 'raw', 's3://raw.example.com/base/events'));
    await w.write('logs', dataSourceManifest('logs', 'raw', 's3://raw.example.com/base/logs'));
    ok(await w.govops('apply', 'm'));
    const before = await w.state();
    const idOf = (name: string) => before.resources.find((r) => r.name === name)!.id;
    expect([idOf('events'), idOf('logs')]).toEqual(['1', '2']);
    expect(before.resources.find((r) => r.name === 'logs')!.identity).toBe(`${idOf('raw')}|s3://raw.example.com/base/logs`);
    // Someone removes govops' data sources; another team's data sources get their ids back.
    await w.admin.deleteDataSource('1');
    await w.admin.deleteDataSource('2');
    const theirs = await w.admin.createIntegration({
      type: 'object_store', autoBootstrap: false,
      config: { name: 'theirs', cloudAccountId: '123456789012', cloudRegion: 'us-east-1', cloudLocationRole: 'arn:cloud:iam::123456789012:role/grants', cloudLocationPath: 's3://theirs.example.com/base/', authenticationType: 'auto' },
    });
    await w.sb.finishTransitions();
    const outsiders = await w.admin.createDataSources(theirs.id, [
      { dataSourceName: 'their-a', prefix: 's3://theirs.example.com/base/a' },
      { dataSourceName: 'their-b', prefix: 's3://theirs.example.com/base/b' },
    ]);
    expect(outsiders.map((d) => d.id)).toEqual(['1', '2']);
    // logs' manifest is removed (prune); events' stays (recreated under a new id, never "updated" by the old one)
    await w.remove('logs');
    w.sb.clearRequests();
    const pruned = ok(await w.govops('apply', 'm', '--prune', '--max-deletes', '3'));
    expect(pruned.stdout + pruned.stderr).toMatch(/DataSource\/logs: the recorded id 2 now holds another data source/);
    expect(pruned.stdout + pruned.stderr).toMatch(/DataSource\/events: the recorded id 1 now holds another data source/);
    expect(w.writes().filter((l) => l.startsWith('DELETE'))).toEqual([]);
    const live = await w.admin.listDataSources();
    expect(live.filter((d) => d.integrationId === theirs.id).map((d) => d.id).sort()).toEqual(['1', '2']);
    const ours = live.filter((d) => d.integrationId === idOf('raw'));
    expect(ours.map((d) => d.prefix)).toEqual(['s3://raw.example.com/base/events']);
    const after = await w.state();
    expect(after.resources.filter((r) => r.kind === 'DataSource').map((r) => `${r.name}=${r.id}`)).toEqual([`events=${ours[0]!.id}`]);
    // a plan afterwards is a no-op
    w.sb.clearRequests();
    ok(await w.govops('plan', 'm', '--prune', '--detailed-exitcode'));
    expect(w.writes()).toEqual([]);
  });
});

describe("drill: same-name webhooks govops did not create", () => {
  it('another team (other URL, the admin token) and another user (createdBy 2): reported, never deleted', async () => {
    const w = await setup();
    await w.write('wx', hook('wx-wh-0'));
    ok(await w.govops('apply', 'm'));
    const input = { name: 'wx-wh-0', global: false, notificationType: ['modelCreated'], actionType: 'triggered' as const };
    await w.admin.createWebhooks([{ ...input, url: 'https://other-team.example.com/in' }]);
    const byUser = await w.user.createWebhooks([{ ...input, notificationType: ['modelAccessRequested'], url: 'https://hooks.example.com/wx-wh-0' }]);
    expect(byUser.createdWebhooks.map((h) => h.createdBy)).toEqual([2]);
    w.sb.clearRequests();
    const pruned = ok(await w.govops('apply', 'm', '--prune'));
    expect(w.writes()).toEqual([]);
    expect(pruned.stdout + pruned.stderr).toMatch(/Webhook\/wx-wh-0: 2 other live webhooks have this name \(ids 2, 3\); govops did not create them and never deletes them/);
    expect((await w.admin.listWebhooks()).filter((h) => h.name === 'wx-wh-0')).toHaveLength(3);
    // a plan afterwards is a no-op (the warning stays); govops owns exactly one
    ok(await w.govops('plan', 'm', '--prune', '--detailed-exitcode'));
    expect((await w.state()).resources.filter((r) => r.kind === 'Webhook')).toHaveLength(1);
  });
});

describe('drill: the mass-deletion guard with deletes awaiting a manual step', () => {
  it('3 of 8 removed, 2 of them awaiting a manual step: refused whole, the same as with --manual-steps trust', async () => {
    const w = await setup();
    for (const n of ['s0', 's1', 's2']) await w.write(n, sql(n));
    for (const n of ['l0', 'l1', 'l2', 'l3', 'l4']) await w.write(n, lake(n, `${n}.example.com`));
    ok(await w.govops('apply', 'm', '--manual-steps', 'trust'));
    const applied = await w.state();
    expect(applied.resources).toHaveLength(8);
    const l0 = applied.resources.find((r) => r.name === 'l0')!.id;
    // s0 and s1 (their deletes need the platform's delete script) and l0 removed: 3 of 8, the default limit is 2
    for (const n of ['s0', 's1', 'l0']) await w.remove(n);
    for (const mode of ['require', 'trust']) {
      w.sb.clearRequests();
      const r = await w.govops('apply', 'm', '--prune', '--manual-steps', mode);
      expect(w.writes(), mode).toEqual([]);
      expect(r.stdout + r.stderr, mode).toMatch(/the plan deletes 3 of 8 managed resources, more than the default limit \(25%: 2\): none of them is deleted/);
      expect(r.code, mode).not.toBe(0);
    }
    expect(await w.admin.listIntegrations()).toHaveLength(8);
    // allowed explicitly, the deletes that need nothing go, the others wait
    w.sb.clearRequests();
    await w.govops('apply', 'm', '--prune', '--max-deletes', '3');
    expect(w.writes()).toEqual([`DELETE /integrations/${l0}`]);
  });
});

describe('a list that lags behind writes', () => {
  it('a recorded id missing from the list is confirmed by id before anything is planned: present is used, 404 is gone', async () => {
    const w = await setup(['list-lag']);
    await w.write('a', lake('a', 'a.example.com'));
    await w.write('wx', hook('wx-wh-0'));
    ok(await w.govops('apply', 'm'));
    const ids = Object.fromEntries((await w.state()).resources.map((r) => [r.name, r.id]));
    // the next lists leave out what was just written: the plan asks for each by id and finds nothing to do
    w.sb.clearRequests();
    ok(await w.govops('plan', 'm', '--detailed-exitcode'));
    const gets = w.sb.requests().filter((r) => r.method === 'GET').map((r) => r.path);
    expect(gets).toEqual(expect.arrayContaining([`/integrations/${ids.a}`, `/webhooks/${ids['wx-wh-0']}`]));
    expect(w.writes()).toEqual([]);
    // an edit (written again, so left out of the next list), then another write: still exactly one of each
    await w.write('a', lake('a', 'a.example.com').replace('/sql/1', '/sql/2'));
    ok(await w.govops('apply', 'm'));
    w.sb.clearRequests();
    ok(await w.govops('apply', 'm'));
    expect(w.writes()).toEqual([]);
    expect(await w.admin.listIntegrations()).toHaveLength(1);
    expect(await w.admin.listWebhooks()).toHaveLength(1);
    // gone for real (404 by id): the manifest is created again, once
    await w.admin.deleteIntegration(ids.a!, undefined);
    await w.sb.finishTransitions();
    w.sb.clearRequests();
    ok(await w.govops('apply', 'm'));
    expect(w.writes()).toEqual(['POST /integrations']);
    ok(await w.govops('plan', 'm', '--detailed-exitcode'));
    expect(await w.admin.listIntegrations()).toHaveLength(1);
  });
});
