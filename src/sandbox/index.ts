/**
 * The sandbox: a stateful, faithful implementation of the service interface (integrations, webhooks,
 * authentication) with a control API for rehearsals and tests. `startSandbox({ port: 0 })` from code,
 * `govops sandbox` from the command line. See docs/sandbox.md.
 */
import type { AddressInfo, LookupFunction } from 'node:net';
import { silentLogger, type Logger } from '../log.js';
import { buildTokens, type TokenOrigin } from './auth.js';
import { Behaviours, withLostCreateAnswers, type Behaviour } from './behaviours.js';
import { controlRoutes } from './control.js';
import { dataSourceRoutes } from './data-sources/routes.js';
import { DataSourceStore } from './data-sources/store.js';
import { FaultSet, type FaultInput } from './faults.js';
import { Failures } from './integrations/failures.js';
import { integrationRoutes } from './integrations/routes.js';
import { IntegrationStore } from './integrations/store.js';
import { DATA_VERSION, Persister } from './persistence.js';
import { systemClock, type Clock } from '../util/clock.js';
import { RequestLog, type RequestLogEntry } from './requestlog.js';
import { createSandboxServer, DEFAULT_BODY_LIMIT } from './server.js';
import { createWebhookService, parseDeliveryHosts, type DeliveryHostsInput, type WebhookService } from './webhooks/index.js';

export { DEV_ADMIN_TOKEN, DEV_USER_TOKEN, type TokenOrigin } from './auth.js';
export type { FaultInput, FaultRule, FaultType } from './faults.js';
export type { RequestLogEntry } from './requestlog.js';
export { BEHAVIOURS, parseBehaviours, type Behaviour } from './behaviours.js';
export { BLOCKED_CODE, LOOPBACK_HOSTS, describePolicy, parseDeliveryHosts, type DeliveryHostsInput } from './webhooks/index.js';

export interface SandboxOptions {
  /** 0 = a free port (default 0 from code; the CLI defaults to 8088). */
  port?: number;
  host?: string;
  /** Time a transition (creating/editing/deleting) takes. Default 2000. */
  transitionMs?: number;
  /** Webhook receiver deadline. Default 10000. */
  deliveryTimeoutMs?: number;
  adminToken?: string;
  userToken?: string;
  /** JSON: [{ token, role: "admin"|"user", userId, name }]. */
  tokensFile?: string;
  /** Use the fixed, documented dev tokens when none are given. */
  dev?: boolean;
  /** Persist state here (atomically) and load it on start. */
  dataFile?: string;
  logger?: Logger;
  /** Fault rules active from the start. */
  faults?: FaultInput[];
  /** Hold transitions: true = all (integrations stay creating/editing/deleting), or the statuses to hold. */
  stuckTransitions?: boolean | string[];
  /** Random source for probabilistic faults (tests may make it deterministic). */
  random?: () => number;
  /** Maximum request body size in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /**
   * Receiver hosts webhook deliveries may reach. Default: loopback only (127.0.0.0/8, ::1, localhost).
   * `'*'` = any host; else a comma list / array of host names, `.suffixes`, IP addresses, CIDRs and the
   * keywords `loopback` / `none`. Other deliveries are recorded as 500 `EBLOCKED` without any network use.
   */
  deliveryHosts?: DeliveryHostsInput;
  /** Resolver for allowed webhook host names other than `localhost` (default: the system resolver). */
  deliveryLookup?: LookupFunction;
  /**
   * Server behaviours where the interface is silent (see BEHAVIOURS, docs/sandbox.md): a comma list or an
   * array, e.g. `['omit-defaults', 'shuffle']`. Default: none (defaults filled, ids as documented, masks shown).
   */
  behaviours?: string | readonly string[];
  /**
   * Time and the timers that end transitions (default: the system's). A test that drives govops with a clock it
   * moves by hand gives the sandbox the same one: transitions then end at that clock's times.
   */
  clock?: Clock;
  /**
   * The timers of the webhook delivery deadline (`deliveryTimeoutMs`; default: the system's). Separate from
   * `clock`: a test that moves transitions by hand still has its deliveries time out in real time.
   */
  deliveryTimers?: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
}

export interface SandboxHandle {
  url: string;
  host: string;
  port: number;
  adminToken: string;
  userToken: string;
  /** True when tokens were generated (not given, not --dev): print them for the user. */
  tokensGenerated: boolean;
  /** Where each token came from: `given` (option), `file` (tokens file), `dev`, `generated`. */
  tokenOrigins: { admin: TokenOrigin; user: TokenOrigin };
  requests(): RequestLogEntry[];
  clearRequests(): void;
  faults: FaultSet;
  failures: Failures;
  /** Hold transitions (true = all, or the statuses to hold); releasing lets them complete. */
  setStuckTransitions(on: boolean | readonly string[]): void;
  /** Complete every pending transition now. */
  finishTransitions(): number;
  integrations: IntegrationStore;
  /** Object-store data sources (removed with their integration). */
  dataSources: DataSourceStore;
  webhooks: WebhookService;
  /** The server behaviours in force. */
  behaviours(): Behaviour[];
  /** Switch the server behaviours (replaces the set; throws on an unknown name or a conflicting pair). */
  setBehaviours(input: string | readonly string[]): void;
  /** Forget all state, faults, failure rules, the request log and what the behaviours remembered of requests. */
  reset(): void;
  /** Write the data file now (no-op without one). */
  save(): Promise<void>;
  close(): Promise<void>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const logger = options.logger ?? silentLogger();
  const behaviours = new Behaviours(options.behaviours, options.random);
  const deliveryPolicy = parseDeliveryHosts(options.deliveryHosts);
  const tokens = buildTokens(options);
  const faults = new FaultSet(options.random);
  for (const f of options.faults ?? []) faults.add(f);
  faults.setStuck(options.stuckTransitions ?? false);
  const failures = new Failures();
  const log = new RequestLog();
  const userNames = new Map([...tokens.callers.values()].map((c) => [c.userId, c.userName]));
  const clock = options.clock ?? systemClock;
  const webhooks = createWebhookService({
    deliveryTimeoutMs: options.deliveryTimeoutMs ?? 10_000,
    logger,
    now: () => new Date(clock.now()),
    userName: (id) => userNames.get(id),
    // Saved only once the loaded state is in place (Persister.arm).
    onChange: () => persister?.changed(),
    deliveryHosts: deliveryPolicy,
    behaviours,
    ...(options.deliveryLookup ? { lookup: options.deliveryLookup } : {}),
    ...(options.deliveryTimers ? { deliveryTimers: options.deliveryTimers } : {}),
  });
  let persister: Persister | undefined;
  const dataSources = new DataSourceStore({ behaviours, now: () => clock.now(), onChange: () => persister?.changed() });
  const store: IntegrationStore = new IntegrationStore({
    transitionMs: options.transitionMs ?? 2000,
    now: () => clock.now(),
    ...(options.clock ? { clock: options.clock } : {}),
    stuck: (status) => faults.isStuck(status),
    behaviours,
    onChange: () => persister?.changed(),
    onRemove: (item) => dataSources.removeIntegration(item.id),
    onTransition: (event, item, previous) => {
      const metadata = {
        modelId: item.id,
        modelType: 'integration',
        integrationType: item.type,
        status: item.status,
        previousStatus: previous,
        host: store.host(item),
      };
      webhooks.emit(event === 'failed' ? 'healthCheckFailed' : 'healthCheckResolved', metadata, item.pendingActor);
    },
  });
  persister = new Persister(
    options.dataFile,
    () => ({
      version: DATA_VERSION,
      savedAt: new Date().toISOString(),
      integrations: store.snapshot(),
      webhooks: webhooks.snapshot(),
      dataSources: dataSources.snapshot(),
    }),
    logger,
  );
  const loaded = await persister.load();
  if (loaded) {
    try {
      store.restore(loaded.integrations);
      webhooks.restore(loaded.webhooks);
      dataSources.restore(loaded.dataSources);
    } catch (err) {
      store.close();
      throw new Error(`sandbox data file ${options.dataFile}: ${(err as Error).message}; fix or remove it`, { cause: err });
    }
  }
  persister.arm();
  const setStuck = (on: boolean | readonly string[]): void => {
    faults.setStuck(on);
    store.rescheduleAll();
  };
  const reset = (): void => {
    store.clear();
    dataSources.clear();
    webhooks.reset();
    faults.clear();
    failures.clear();
    log.clear();
    behaviours.forget();
  };
  const ctx = { store, failures, behaviours, now: () => clock.now(), emit: webhooks.emit.bind(webhooks) };
  const routes = withLostCreateAnswers([
    ...integrationRoutes(ctx),
    ...dataSourceRoutes({ store: dataSources, integrations: store, behaviours, emit: ctx.emit }),
    ...webhooks.routes,
    ...webhooks.controlRoutes,
    ...controlRoutes({ log, faults, failures, store, reset, setStuck }),
  ], behaviours);
  const server = createSandboxServer({
    routes,
    callers: tokens.callers,
    faults,
    log,
    logger,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    control: { open: options.dev === true, host: options.host ?? '127.0.0.1' },
    now: () => clock.now(),
  });
  const host = options.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    // Nothing of this sandbox may go on acting on the loaded state (npm start then starts another on the same file).
    store.close();
    persister.cancel();
    await webhooks.close();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  logger.info({ host, port }, 'sandbox listening');
  return {
    url: `http://${urlHost}:${port}`,
    host,
    port,
    adminToken: tokens.adminToken,
    userToken: tokens.userToken,
    tokensGenerated: tokens.generated,
    tokenOrigins: { ...tokens.origins },
    requests: () => log.list(),
    clearRequests: () => log.clear(),
    faults,
    failures,
    setStuckTransitions: setStuck,
    finishTransitions: () => store.finishAll(),
    behaviours: () => behaviours.list(),
    setBehaviours: (input) => {
      behaviours.replace(input);
      store.invalidateViews();
    },
    integrations: store,
    dataSources,
    webhooks,
    reset,
    save: () => persister.flush(),
    close: () =>
      (closed ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        store.close();
        await webhooks.close();
        await persister.flush();
      })()),
  };
}
