/**
 * govops against every plausible service: the sandbox under each server behaviour (src/sandbox/behaviours.ts),
 * with the real reconcile engine over HTTP.
 */
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import type { ReconcileOptions, ReconcileResult } from '../../src/reconcile/types.js';
import { BEHAVIOURS, startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import type { GovopsState } from '../../src/state/types.js';

/** Every behaviour alone, none, and two maximal combinations (the exclusive pairs split between them). */
export const BEHAVIOUR_SETS: string[][] = [
  [],
  ...Object.keys(BEHAVIOURS).map((b) => [b]),
  ['omit-defaults', 'null-unset', 'extra-fields', 'numeric-ids', 'omit-masked', 'shuffle', 'validation-warning', 'skip-creating', 'skip-editing'],
  ['echo-sent', 'null-unset', 'extra-fields', 'string-ids', 'shuffle', 'validation-warning'],
];

export const label = (set: readonly string[]): string => (set.length ? set.join('+') : 'default');

/** Requests that change something in the service (not GETs, not dry runs). */
export function writesOf(sandbox: SandboxHandle): string[] {
  return sandbox
    .requests()
    .filter((r) => r.method !== 'GET' && r.query.dryRun !== 'true')
    .map((r) => `${r.method} ${r.path}`);
}

export interface World {
  sandbox: SandboxHandle;
  api: ServiceClient;
  dir: string;
  statePath: string;
  env: Record<string, string>;
  write(file: string, text: string): Promise<void>;
  remove(file: string): Promise<void>;
  run(opts?: Partial<ReconcileOptions> & { statePath?: string }): Promise<ReconcileResult>;
  state(): Promise<GovopsState>;
  close(): Promise<void>;
}

export async function world(behaviours: readonly string[], options: { random?: () => number } = {}): Promise<World> {
  const sandbox = await startSandbox({ port: 0, transitionMs: 10, behaviours, ...(options.random ? { random: options.random } : {}) });
  const dir = await mkdtemp(path.join(tmpdir(), 'govops-behaviour-'));
  await mkdir(path.join(dir, 'm'));
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries: 0 });
  const statePath = path.join(dir, '.govops', 'state.json');
  const env: Record<string, string> = {};
  return {
    sandbox,
    api,
    dir,
    statePath,
    env,
    write: (file, text) => writeFile(path.join(dir, 'm', file), text),
    remove: (file) => unlink(path.join(dir, 'm', file)),
    run: (opts = {}) =>
      reconcile(api, {
        root: dir,
        paths: ['m'],
        apply: true,
        prune: false,
        allowReplace: false,
        logger: silentLogger(),
        statePath,
        env,
        timeoutMs: 20_000,
        pollIntervalMs: 5,
        pollMaxIntervalMs: 50,
        ...opts,
      }),
    state: async () => JSON.parse(await readFile(statePath, 'utf8')) as GovopsState,
    close: async () => {
      await api.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A set of manifests over several kinds, with defaults left out, sets out of order and secrets. */
export const MANIFESTS: Record<string, string> = {
  'sql.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: sql
spec:
  type: sql_analytics
  autoBootstrap: true
  config:
    host: sql.example.com
    database: governance
    schema: views
    username: svc
    password: { fromEnv: SQL_PASSWORD }
  deleteCredentials:
    authenticationType: userPassword
    username: admin
    password: { fromEnv: ADMIN_PASSWORD }
`,
  'lake.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: lake
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: my-workspace.cloud.example.com
    httpPath: /sql/1
    token: { fromEnv: LAKE_TOKEN }
    groupPattern: {}
`,
  'wh.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: wh
spec:
  type: cloud_warehouse
  autoBootstrap: false
  config:
    host: wh.example.com
    warehouse: WH
    database: GOV
    authenticationType: keyPair
    username: SYS
    privateKey: { fromEnv: WH_KEY }
    port: 443
    userRolePattern:
      exclude: [SYSADMIN, ACCOUNTADMIN, ORGADMIN]
    workspaces:
      enabled: true
      warehouses: [B_WH, A_WH]
    lineage:
      enabled: true
      lineageConfig: { ingestBatchSize: 500 }
`,
  'bucket.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: bucket
spec:
  type: object_store
  autoBootstrap: false
  config:
    name: raw
    cloudAccountId: "123456789012"
    cloudRegion: eu-west-1
    cloudLocationRole: arn:role/grants
    cloudLocationPath: s3://raw/
    authenticationType: auto
`,
  'hooks.yaml': `apiVersion: govops/v1
kind: Webhook
metadata:
  name: alerts
spec:
  url: https://hooks.example.com/alerts
  global: true
  notificationType: [modelCreated, healthCheckFailed, tagCreated]
  actionType: triggered
  secret: { fromEnv: HOOK_SECRET }
`,
};

export const SECRETS = {
  SQL_PASSWORD: 'pw-one',
  ADMIN_PASSWORD: 'admin-pw',
  LAKE_TOKEN: 'lake-token',
  WH_KEY: 'wh-private-key',
  HOOK_SECRET: 'hook-secret',
};
