/** In-process reconcile against a real sandbox over HTTP (faster than spawning the CLI for each step). */
import { mkdir, mkdtemp, rm, writeFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { ServiceClient } from '../../src/api/client.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { engineOptions, type FlatEngineOptions } from '../helpers/engine-options.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import type { GovopsState } from '../../src/state/types.js';
import { loadState, saveState } from '../../src/state/store.js';
import type { Clock } from '../../src/util/clock.js';
import { ManualClock } from '../helpers/clock.js';
import { trackApi, type TrackedApi } from '../helpers/tracked-api.js';
import { lakehouseManifest } from '../helpers/manifests.js';
import { rewritingProxy, type Rewrite, type RewritingProxy } from '../helpers/rewriting-proxy.js';

/**
 * The applier's `persist` for tests on a manual clock: saves the state at `statePath()`, and the clock's time holds
 * while a save is being written, as while a request is in flight.
 */
export function clockHeldSaves(clock: ManualClock, statePath: () => string): (s: GovopsState) => Promise<void> {
  let saving = 0;
  clock.holdWhile(() => saving > 0);
  return async (s) => {
    saving++;
    try {
      await saveState(statePath(), s);
    } finally {
      saving--;
    }
  };
}

export interface Rig {
  sandbox: SandboxHandle;
  /** The sandbox itself (never through the proxy): what the service holds. */
  api: ServiceClient;
  /** With `rewrite`: the proxy reconciles go through (a plausible other service). */
  proxy?: RewritingProxy;
  dir: string;
  statePath: string;
  env: Record<string, string>;
  /** Every log line written by reconciles (to grep for secrets). */
  logs: string[];
  write(file: string, text: string): Promise<void>;
  remove(file: string): Promise<void>;
  /** One reconcile; the options flat (source, plan and tuning fields together), as engineOptions takes them. */
  run(opts?: Partial<FlatEngineOptions>): Promise<ReconcileResult>;
  state(): Promise<GovopsState>;
  lines(): string[];
  close(): Promise<void>;
}

export async function rig(
  options: { transitionMs?: number; behaviours?: readonly string[]; random?: () => number; bodyLimit?: number; clock?: Clock; rewrite?: Rewrite } = {},
): Promise<Rig> {
  const sandbox = await startSandbox({
    port: 0,
    transitionMs: options.transitionMs ?? 50,
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.behaviours ? { behaviours: options.behaviours } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'govops-apply-'));
  await mkdir(path.join(dir, 'm'));
  // Retries off so a failure surfaces at once, except against a service that loses write answers
  // (503-after-success-all): there an update or delete is survived only by the client re-sending it, as in production.
  const retries = options.behaviours?.includes('503-after-success-all') ? 2 : 0;
  const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries });
  const proxy = options.rewrite ? await rewritingProxy(sandbox.url, options.rewrite) : undefined;
  const runApi = proxy ? new ServiceClient({ baseUrl: proxy.url, token: sandbox.adminToken, logger: silentLogger(), retries }) : api;
  const statePath = path.join(dir, '.govops', 'state.json');
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger({ level: 'debug', destination: sink });
  const env: Record<string, string> = {};
  return {
    sandbox,
    api,
    ...(proxy ? { proxy } : {}),
    dir,
    statePath,
    env,
    logs,
    write: (file, text) => writeFile(path.join(dir, 'm', file), text),
    remove: (file) => unlink(path.join(dir, 'm', file)),
    run: (opts = {}) =>
      reconcile(
        runApi,
        engineOptions({
          root: dir,
          paths: ['m'],
          apply: true,
          prune: false,
          allowReplace: false,
          logger,
          statePath,
          env,
          timeoutMs: 20_000,
          pollIntervalMs: 20,
          pollMaxIntervalMs: 200,
          ...opts,
        }),
      ),
    state: () => loadState(statePath),
    lines: () =>
      sandbox.requests().map((r) => {
        const q = new URLSearchParams(r.query).toString();
        return `${r.method} ${r.path}${q ? `?${q}` : ''} ${r.status}`;
      }),
    close: async () => {
      await api.close();
      if (runApi !== api) await runApi.close();
      await proxy?.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function sqlManifest(name: string, host: string, opts: { database?: string; port?: number; autoBootstrap?: boolean; deleteCreds?: boolean; annotations?: string } = {}): string {
  return `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}${opts.annotations ? `\n  annotations:\n${opts.annotations}` : ''}
spec:
  type: sql_analytics
  autoBootstrap: ${opts.autoBootstrap ?? true}
  config:
    host: ${host}
    database: ${opts.database ?? 'governance'}
    schema: views
    username: svc
    password: { fromEnv: GOVOPS_SECRET_SQL_PASSWORD }
    port: ${opts.port ?? 1433}
${opts.deleteCreds === false ? '' : `  deleteCredentials:
    authenticationType: userPassword
    username: admin
    password: { fromEnv: GOVOPS_SECRET_ADMIN_PASSWORD }
`}`;
}

export function lakeManifest(name: string, host: string, httpPath = '/sql/1'): string {
  return lakehouseManifest({ name, host, httpPath, tokenEnv: 'GOVOPS_SECRET_LAKE_TOKEN' });
}

export function webhookManifest(name: string, types: string[] = ['modelCreated'], secret = true): string {
  return `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: https://hooks.example.com/${name}
  global: false
  notificationType: [${types.join(', ')}]
  actionType: triggered
${secret ? '  secret: { fromEnv: GOVOPS_SECRET_HOOK_SECRET }\n' : ''}`;
}

/** A rig on a ManualClock the sandbox and govops share: requests in flight (`tracked`) and state saves hold it. */
export interface ClockRig {
  r: Rig;
  clock: ManualClock;
  tracked: TrackedApi<ServiceClient>;
  /** The applier's `persist`: the state file, saved while the clock holds (clockHeldSaves). */
  persist: (s: GovopsState) => Promise<void>;
}

export async function clockRig(options: Omit<NonNullable<Parameters<typeof rig>[0]>, 'clock'> = {}): Promise<ClockRig> {
  const clock = new ManualClock();
  const r = await rig({ ...options, clock });
  return { r, clock, tracked: trackApi(r.api, clock), persist: clockHeldSaves(clock, () => r.statePath) };
}
