/**
 * govops against every plausible service: the sandbox under each server behaviour (src/sandbox/behaviours.ts),
 * with the real reconcile engine over HTTP.
 */
import { BEHAVIOURS, type SandboxHandle } from '../../src/sandbox/index.js';
import { rig, type Rig } from '../apply/inproc.js';

/**
 * Every behaviour alone, none, and two maximal combinations (the exclusive pairs split between them). `list-lag` runs
 * alone only: what reads a list without a state to confirm from (govops export) cannot see what was just written.
 */
export const BEHAVIOUR_SETS: string[][] = [
  [],
  ...Object.keys(BEHAVIOURS).map((b) => [b]),
  ['omit-defaults', 'null-unset', 'extra-fields', 'numeric-ids', 'omit-masked', 'shuffle', 'validation-warning', 'skip-creating', 'skip-editing', 'data-source-metadata', 'reuse-ids', 'lower-hosts', 'unknown-statuses'],
  ['echo-sent', 'null-unset', 'extra-fields', 'string-ids', 'shuffle', 'validation-warning', 'hard-delete', 'other-mask', 'mask-more', 'lower-hosts', '503-after-success-all', 'status-404-lag', 'dry-run-200-failed'],
];

export const label = (set: readonly string[]): string => (set.length ? set.join('+') : 'default');

/** Requests that change something in the service (not GETs, not dry runs). */
export function writesOf(sandbox: SandboxHandle): string[] {
  return sandbox
    .requests()
    .filter((r) => r.method !== 'GET' && r.query.dryRun !== 'true')
    .map((r) => `${r.method} ${r.path}`);
}

export type World = Rig;

/**
 * A sandbox under the behaviours, a manifest folder (`m/`) and the real reconcile engine (test/apply/inproc.ts).
 * The manual-flow integrations' scripts are trusted to have run (`manualSteps: 'trust'`): these tests are about what
 * the service echoes; the manual-step gate has its own (test/plan/manual-steps.test.ts, test/apply/manual-steps.test.ts).
 */
export async function world(behaviours: readonly string[], options: { random?: () => number } = {}): Promise<World> {
  const r = await rig({ transitionMs: 10, behaviours, ...options });
  const run = r.run;
  return { ...r, run: (opts = {}) => run({ manualSteps: 'trust', ...opts }) };
}

/** A set of manifests over several kinds, with defaults left out, sets out of order, secrets and host names in mixed case. */
export const MANIFESTS: Record<string, string> = {
  'sql.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: sql
spec:
  type: sql_analytics
  autoBootstrap: true
  config:
    host: SQL.Example.com
    database: governance
    schema: views
    username: svc
    password: { fromEnv: GOVOPS_SECRET_SQL_PASSWORD }
  deleteCredentials:
    authenticationType: userPassword
    username: admin
    password: { fromEnv: GOVOPS_SECRET_ADMIN_PASSWORD }
`,
  'lake.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: lake
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://My-Workspace.cloud.example.com/
    httpPath: /sql/1
    token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN }
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
    privateKey: { fromEnv: GOVOPS_SECRET_WH_KEY }
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
  url: https://Hooks.Example.com/alerts
  global: true
  notificationType: [modelCreated, healthCheckFailed, tagCreated]
  actionType: triggered
  secret: { fromEnv: GOVOPS_SECRET_HOOK_SECRET }
`,
};

export const SECRETS = {
  GOVOPS_SECRET_SQL_PASSWORD: 'pw-one',
  GOVOPS_SECRET_ADMIN_PASSWORD: 'admin-pw',
  GOVOPS_SECRET_LAKE_TOKEN: 'lake-token',
  GOVOPS_SECRET_WH_KEY: 'wh-private-key',
  GOVOPS_SECRET_HOOK_SECRET: 'hook-secret',
};
