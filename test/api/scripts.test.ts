/** The manual flow: fetchScript against the sandbox (finding the manifest, checks, live id lookup). */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { fetchScript, type ScriptRequest } from '../../src/cli/commands/scripts-action.js';
import { UserError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { parseManifestText } from '../../src/manifests/parse.js';
import type { ManifestSet } from '../../src/manifests/types.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { fingerprintAll, loadState, putResource, saveState } from '../../src/state/store.js';

const MANIFESTS = `apiVersion: govops/v1
kind: Integration
metadata: { name: analytics }
spec:
  type: sql_analytics
  autoBootstrap: false
  config:
    host: sql.example.com
    database: gov
    schema: views
    username: svc_user
    password: { fromEnv: GOVOPS_SECRET_SQL_PW }
---
apiVersion: govops/v1
kind: Integration
metadata: { name: auto }
spec:
  type: sql_analytics
  autoBootstrap: true
  config: { host: auto.example.com, database: gov, schema: views, username: u, password: { fromEnv: GOVOPS_SECRET_SQL_PW } }
---
apiVersion: govops/v1
kind: Integration
metadata: { name: store }
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: store
    cloudAccountId: "123"
    cloudRegion: us-east-1
    cloudLocationRole: role
    cloudLocationPath: s3://bucket
    authenticationType: auto
---
apiVersion: govops/v1
kind: Integration
metadata: { name: lake }
spec:
  type: lakehouse
  autoBootstrap: false
  config: { workspaceUrl: 'https://ws.example.com', httpPath: /sql/1, token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN } }
---
apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec: { url: 'https://hooks.example.com/x', global: false, notificationType: [userCreated], actionType: triggered }
`;

let sb: SandboxHandle;
let api: ServiceClient;
let dir: string;
const load = async (): Promise<ManifestSet> => parseManifestText(MANIFESTS, 'm.yaml', dir);

beforeAll(async () => {
  sb = await startSandbox({ port: 0, transitionMs: 50, dev: true });
  api = new ServiceClient({ baseUrl: sb.url, token: sb.adminToken });
});
afterAll(async () => {
  await api.close();
  await sb.close();
});
beforeEach(() => {
  sb.reset();
  dir = mkdtempSync(path.join(os.tmpdir(), 'govops-scripts-'));
  return () => rmSync(dir, { recursive: true, force: true });
});

const req = (name: string, phase: ScriptRequest['phase'], env: Record<string, string> = { GOVOPS_SECRET_SQL_PW: 'pw-top-secret' }): ScriptRequest => ({
  name,
  phase,
  paths: ['.'],
  cwd: dir,
  statePath: path.join(dir, '.govops', 'state.json'),
  env,
});

async function fails(p: Promise<unknown>): Promise<UserError> {
  const err = await p.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(UserError);
  return err as UserError;
}

describe('fetchScript', () => {
  it('create: posts {type, autoBootstrap:false, config} with resolved secrets and returns the script', async () => {
    const res = await fetchScript(req('analytics', 'create'), { load, api, logger: silentLogger() });
    expect(res.script).toContain('sql.example.com');
    expect(res.script).not.toContain('pw-top-secret');
    const log = sb.requests();
    expect(log.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /integrations/scripts/create 200']);
  });

  it('edit: finds the live id by natural key, or from govops state first', async () => {
    const created = await api.createIntegration({
      type: 'sql_analytics',
      autoBootstrap: false,
      config: { host: 'sql.example.com', database: 'gov', schema: 'views', username: 'svc_user', password: 'pw-top-secret' },
    });
    const byKey = await fetchScript(req('analytics', 'edit'), { load, api, logger: silentLogger() });
    expect(byKey.id).toBe(created.id);
    expect(sb.requests().at(-1)!.path).toBe(`/integrations/${created.id}/scripts/edit`);

    let state = await loadState(req('x', 'edit').statePath);
    state = putResource(state, {
      kind: 'Integration', name: 'analytics', id: created.id, origin: 'created', specHash: 'h',
      secretFingerprints: fingerprintAll(state.fingerprintKey, { 'config.password': 'pw-top-secret' }), updatedAt: new Date().toISOString(),
    });
    await saveState(req('x', 'edit').statePath, state);
    sb.clearRequests();
    const byState = await fetchScript(req('analytics', 'delete'), { load, api, logger: silentLogger() });
    expect(byState.id).toBe(created.id);
    // by the recorded id, checked to be still the recorded integration (no list)
    expect(sb.requests().map((r) => `${r.method} ${r.path}`)).toEqual([`GET /integrations/${created.id}`, `POST /integrations/${created.id}/scripts/delete`]);
    expect(readFileSync(req('x', 'edit').statePath, 'utf8')).not.toContain('pw-top-secret');
  });

  it('cleanup then post-cleanup (sql_analytics failed creation) and initial-create post the body without an id', async () => {
    const deps = { load, api, logger: silentLogger() };
    for (const phase of ['initial-create', 'cleanup', 'post-cleanup'] as const) {
      const res = await fetchScript(req('analytics', phase), deps);
      expect(res.id).toBeUndefined();
      expect(res.script.length).toBeGreaterThan(0);
    }
    expect(sb.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /integrations/scripts/initial-create 200',
      'POST /integrations/scripts/cleanup 200',
      'POST /integrations/scripts/post-cleanup 200',
    ]);
  });

  it('clear errors: unknown name, webhook, phase not for the kind, autoBootstrap true, missing secret, no live integration', async () => {
    const deps = { load, api, logger: silentLogger() };
    const unknown = await fails(fetchScript(req('nope', 'create'), deps));
    expect(unknown.message).toMatch(/no Integration named "nope"/);
    expect(unknown.hint).toMatch(/analytics, auto, lake, store/);
    expect((await fails(fetchScript(req('hook', 'create'), deps))).message).toMatch(/Webhook/);
    const kind = await fails(fetchScript(req('store', 'create'), deps));
    expect(kind.message).toMatch(/no create script for an object_store integration \(m\.yaml:\d+:\d+\)/);
    expect(kind.hint).toMatch(/no scripts/);
    const phase = await fails(fetchScript(req('lake', 'delete'), deps));
    expect(phase.message).toMatch(/no delete script for a lakehouse integration/);
    expect(phase.hint).toBe('lakehouse has scripts for: create, edit');
    const auto = await fails(fetchScript(req('auto', 'create'), deps));
    expect(auto.message).toMatch(/autoBootstrap: true/);
    const secret = await fails(fetchScript(req('analytics', 'create', {}), deps));
    expect(secret.message).toMatch(/m\.yaml:\d+:\d+: Integration\/analytics: spec\.config\.password: environment variable GOVOPS_SECRET_SQL_PW is not set/);
    const missing = await fails(fetchScript(req('analytics', 'edit'), deps));
    expect(missing.message).toMatch(/does not exist in the service/);
    expect(sb.requests().filter((r) => r.method === 'POST')).toEqual([]);
  });
});

describe('fetchScript with a state named and not found (a typo of --state)', () => {
  it('is an error naming where it looked; not a silent fall-back to the integration found by its natural key', async () => {
    await api.createIntegration({
      type: 'sql_analytics',
      autoBootstrap: false,
      config: { host: 'sql.example.com', database: 'gov', schema: 'views', username: 'svc_user', password: 'pw-top-secret' },
    });
    const typo = path.join(dir, 'stat.json');
    sb.clearRequests();
    for (const phase of ['edit', 'delete'] as const) {
      // the old code: the script of the integration found by natural key, the state never looked at
      const err = await fails(fetchScript({ ...req('analytics', phase), statePath: typo, stateNamed: true }, { load, api, logger: silentLogger() }));
      expect(err.message).toBe(`there is no govops state at ${typo}`);
    }
    expect(sb.requests().filter((r) => r.method === 'POST')).toEqual([]);
    // the default state, not there yet: nothing recorded, found by natural key
    expect((await fetchScript(req('analytics', 'edit'), { load, api, logger: silentLogger() })).id).toBeDefined();
  });
});
