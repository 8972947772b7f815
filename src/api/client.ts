/**
 * ServiceClient: the service's HTTP API (interface part 4) over one keep-alive undici pool, with
 * timeouts, retries (exponential backoff + full jitter, Retry-After), typed errors, and creates that
 * are never blindly re-sent after an ambiguous failure (the resource is looked up by identity first).
 */
import type { Logger } from 'pino';
import { ApiError, CancelledError, DataSourcesUnsupportedError, DeadlineError, ErrorCode, TransportError, UserError, isAbortError } from '../errors.js';
import { silentLogger } from '../log.js';
import { DATA_SOURCE_INTEGRATION_TYPE } from '../kinds/registry.js';
import { DEFAULT_DATA_SOURCE_DELETE_PATH, DEFAULT_DATA_SOURCES_PATH, dataSourceKey } from '../service/data-sources.js';
import type { ScriptPhase } from '../service/kinds.js';
import { sleep, systemClock, type Clock } from '../util/clock.js';
import type { MutationOptions, RunDeadline, ServiceApi } from './client-types.js';
import { toCreatedDataSources, toDataSourceList, softDeleted, toLiveDataSource, wireIntegrationId } from './data-sources.js';
import { wholeList } from './envelope.js';
import {
  apiErrorFrom,
  scriptText,
  toArray,
  toLiveIntegration,
  toLiveWebhook,
  toMutationResult,
  toStatus,
  toWebhookCreateResponse,
} from './normalize.js';
import {
  DEFAULT_RETRY_POLICY,
  ambiguousStatus,
  backoffDelay,
  clientRetriesStatus,
  parseRetryAfter,
  errorCode,
  isRetryableTransportError,
  transportFailureCode,
  transportPhase,
  type RetryPolicy,
} from './retry.js';
import { findCreatedIntegration, splitCreatedWebhooks, webhookErrorAt } from './recovery.js';
import { scanStatuses } from './status-list.js';
import { HttpTransport, ResponseTooLargeError, type RawResponse } from './transport.js';
import { parseWireJson } from './wire-json.js';
import type {
  DataSourceInput,
  IntegrationBody,
  IntegrationMutationResult,
  IntegrationStatus,
  IntegrationStatusList,
  LiveDataSource,
  LiveIntegration,
  LiveWebhook,
  WebhookCreateResponse,
  WebhookHistoryPage,
  WebhookHistoryQuery,
  WebhookHistoryRecord,
  WebhookInput,
} from './types.js';
import { historyQueryString, toActions, toHistoryPage, toHistoryRecord } from './webhook-history.js';
import { counted } from '../util/plural.js';

/** One HTTP attempt, reported to `onRequest` (e.g. for a Prometheus histogram). */
export interface RequestEvent {
  method: string;
  /** Path template, e.g. `/integrations/{id}/status`. */
  route: string;
  /** HTTP status, or 0 when no response came (see `error`). */
  status: number;
  durationMs: number;
  /** 0-based attempt number. */
  attempt: number;
  /** Error code of a transport failure (ECONNREFUSED, GOVOPS_REQUEST_TIMEOUT...). */
  error?: string;
}

export interface ServiceClientOptions {
  baseUrl: string;
  token: string;
  logger?: Logger;
  /** Whole-request timeout per attempt (connect, headers, body). Default 30s. */
  timeoutMs?: number;
  /**
   * How long a create may take before govops gives up waiting for its answer (default: 4 × timeoutMs,
   * at least 2 minutes). A create is never re-sent while it may still be processed.
   */
  settleTimeoutMs?: number;
  /**
   * How long the service's webhook list may lag behind a create (default 10 s): after a webhook create whose answer
   * was lost, what the list does not show yet is looked for again, within this time (on `clock`), before it is re-sent.
   */
  listLagMs?: number;
  /** Retries after the first attempt. Default 4. */
  retries?: number;
  /** Backoff tuning (tests use small delays). */
  retryPolicy?: Partial<RetryPolicy>;
  /** Max sockets to the origin. Default 16. */
  connections?: number;
  /** The largest answer read, in bytes (default MAX_RESPONSE_BYTES, 256 MiB): a larger one fails, never retried. */
  maxResponseBytes?: number;
  onRequest?: (event: RequestEvent) => void;
  /** Jitter source in [0, 1) (default Math.random; tests make it deterministic). */
  random?: () => number;
  /** The clock of the retry sleeps and Retry-After dates (default: the system's; tests move one by hand). */
  clock?: Clock;
  /** Sent as `User-Agent` on every request (`govops/<version> (<identity>)`), so writes can be attributed. */
  userAgent?: string;
  /**
   * Asked before every attempt of a request that changes something (not GET, not a dry run): throws to refuse
   * it unsent (a daemon replica that is no longer sure it leads sends nothing).
   */
  writeGate?: (method: string, path: string) => void;
  /** Data sources: create (POST), list (GET), read one (GET {path}/{id}). Default /native-s3/handler. */
  dataSourcesPath?: string;
  /** Data sources: delete one (DELETE {path}/{id}). Default /dataSource. */
  dataSourceDeletePath?: string;
}

/** A configured path: one leading slash, no trailing one. */
export function normalizeApiPath(path: string): string {
  return `/${path.trim().replace(/^\/+|\/+$/g, '')}`;
}

type Auth = 'integration' | 'webhook';

/** Logged when a create's answer was lost (5xx, timeout, reset) and its resource was found by natural key. */
export const ANSWER_LOST = 'created by this apply: the answer was lost (5xx, timeout or reset); found by natural key, not re-sent';

/** What to do after an ambiguous failure of a create: the result, or a (possibly smaller) body to re-send. */
type Recovery<T> = { result: T } | { body: unknown };

interface Call<T> {
  method: string;
  route: string;
  path: string;
  auth: Auth;
  body?: unknown;
  accept?: string;
  parse(res: RawResponse): T;
  /** Set for creates: look the resource up before re-sending after an ambiguous failure. */
  recover?: (body: unknown) => Promise<Recovery<T>>;
  /**
   * The lookup reads a list that may lag behind writes and nothing else stops a second copy (webhooks: the service
   * takes any number of the same name): what it does not find is looked for again, for `listLagMs`, before a re-send
   * or an unknown outcome.
   */
  listLags?: boolean;
}

/** What the attempts of one call share: the body to send (a create's lookup may leave less to send). */
interface CallProgress {
  body: unknown;
  /** An attempt of this create may have reached the service. */
  maybeSent: boolean;
}

/** One attempt of a call. */
interface Attempt {
  /** 0 for the first. */
  index: number;
  /** The client's last attempt: no retry after it. */
  last: boolean;
  /** performance.now() when it was sent. */
  started: number;
}

/** How an attempt ended, when it did not throw: with the call's result, or to be sent again. */
type AttemptOutcome<T> = { result: T } | 'again';

function json(res: RawResponse): unknown {
  return parseWireJson(res.text);
}

function contentType(res: RawResponse): string | undefined {
  const v = res.headers['content-type'];
  return Array.isArray(v) ? v[0] : v;
}

export class ServiceClient implements ServiceApi {
  private readonly transport: HttpTransport;
  private readonly token: string;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;
  private readonly onRequest: ((event: RequestEvent) => void) | undefined;
  private readonly random: () => number;
  private readonly clock: Clock;
  private readonly settleMs: number;
  private readonly listLagMs: number;
  private readonly dsPath: string;
  private readonly dsDeletePath: string;
  private readonly userAgent: string | undefined;
  private readonly writeGate: ((method: string, path: string) => void) | undefined;
  /** Cancels retry sleeps (graceful stop); set on views made by withSignal. */
  private stopSignal?: AbortSignal;
  /** Aborts requests in flight (forced stop); set on views made by withSignal. */
  private forceSignal?: AbortSignal;
  /** No retry sleeps or starts past it (the apply --timeout); set on views made by withSignal. */
  private deadline?: RunDeadline;
  /**
   * Until when (on `clock.monotonic()`) the service asked the client to send nothing: the latest 429 or 503 answer's
   * `Retry-After` (at most `maxRetryAfterMs`). One object shared by every view (withSignal copies the reference).
   */
  private readonly heldOff: { until: number; status: number } = { until: -Infinity, status: 0 };

  /** The service's base URL as requests use it (origin and path prefix; no userinfo, no query). */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  constructor(options: ServiceClientOptions) {
    this.transport = new HttpTransport(options.baseUrl, {
      connections: options.connections,
      ...(options.maxResponseBytes !== undefined ? { maxResponseBytes: options.maxResponseBytes } : {}),
    });
    this.token = options.token;
    this.logger = options.logger ?? silentLogger();
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.settleMs = options.settleTimeoutMs ?? Math.max(4 * this.timeoutMs, 120_000);
    this.listLagMs = Math.max(0, options.listLagMs ?? 10_000);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retryPolicy };
    if (options.retries !== undefined) this.policy.retries = Math.max(0, Math.floor(options.retries));
    this.onRequest = options.onRequest;
    this.random = options.random ?? Math.random;
    this.clock = options.clock ?? systemClock;
    this.dsPath = normalizeApiPath(options.dataSourcesPath ?? DEFAULT_DATA_SOURCES_PATH);
    this.dsDeletePath = normalizeApiPath(options.dataSourceDeletePath ?? DEFAULT_DATA_SOURCE_DELETE_PATH);
    this.userAgent = options.userAgent;
    this.writeGate = options.writeGate;
  }

  /**
   * The same client (same connections) bound to a reconcile's signals: `signal` ends retry sleeps
   * (CancelledError) while a request in flight still finishes; `force` aborts requests in flight; `deadline` (the
   * apply --timeout) is when retries stop: one whose wait would end after it is not made (DeadlineError).
   */
  withSignal(signal: AbortSignal, force?: AbortSignal, deadline?: RunDeadline): ServiceClient {
    const view = Object.create(ServiceClient.prototype) as ServiceClient;
    Object.assign(view, this, { stopSignal: signal, forceSignal: force, deadline });
    return view;
  }

  // ---- integrations -------------------------------------------------------------------------

  listIntegrations(): Promise<LiveIntegration[]> {
    const c = { method: 'GET', route: '/integrations', path: '/integrations' };
    return this.call({ ...c, auth: 'integration', parse: (r) => toArray(json(r), toLiveIntegration, 'integrations', c.method, c.path) });
  }

  listIntegrationStatuses(): Promise<IntegrationStatusList> {
    const c = { method: 'GET', route: '/integrations', path: '/integrations' };
    return this.call({
      ...c, auth: 'integration',
      parse: (r) => ({ items: scanStatuses(r.text) ?? toArray(json(r), toStatus, 'integrations', c.method, c.path), bytes: r.text.length }),
    });
  }

  getIntegration(id: string): Promise<LiveIntegration> {
    return this.call({
      method: 'GET', route: '/integrations/{id}', path: `/integrations/${enc(id)}`, auth: 'integration',
      parse: (r) => toLiveIntegration(json(r)),
    });
  }

  createIntegration(body: IntegrationBody, options: MutationOptions = {}): Promise<IntegrationMutationResult> {
    const dry = options.dryRun === true;
    return this.call<IntegrationMutationResult>({
      method: 'POST', route: '/integrations', path: `/integrations${dryQuery(dry)}`, auth: 'integration', body,
      parse: (r) => toMutationResult(json(r)),
      recover: dry ? undefined : async () => {
        const { hit, key, count } = findCreatedIntegration(await this.listIntegrations(), body);
        if (count > 1) {
          throw new TransportError(`create may have reached the service and ${count} integrations now match ${key}; not re-sending`, 'POST', `/integrations${dryQuery(dry)}`, undefined, ErrorCode.createUnsettled);
        }
        if (!hit) return { body };
        this.logger.warn({ id: hit.id, key }, ANSWER_LOST);
        return { result: { id: hit.id, status: hit.status, validationResults: hit.validationResults } };
      },
    });
  }

  updateIntegration(id: string, body: IntegrationBody, options: MutationOptions = {}): Promise<IntegrationMutationResult> {
    return this.call({
      method: 'PUT', route: '/integrations/{id}', path: `/integrations/${enc(id)}${dryQuery(options.dryRun)}`,
      auth: 'integration', body, parse: (r) => toMutationResult(json(r)),
    });
  }

  deleteIntegration(id: string, payload: Record<string, unknown> | undefined, options: MutationOptions = {}): Promise<IntegrationMutationResult> {
    return this.call({
      method: 'DELETE', route: '/integrations/{id}', path: `/integrations/${enc(id)}${dryQuery(options.dryRun)}`,
      auth: 'integration', body: payload, parse: (r) => toMutationResult(json(r)),
    });
  }

  getIntegrationStatus(id: string): Promise<IntegrationStatus> {
    return this.call({
      method: 'GET', route: '/integrations/{id}/status', path: `/integrations/${enc(id)}/status`, auth: 'integration',
      parse: (r) => toStatus(json(r)),
    });
  }

  generateScript(phase: ScriptPhase, args: { id?: string; body?: IntegrationBody }): Promise<string> {
    const withId = phase === 'edit' || phase === 'delete';
    if (withId && !args.id) throw new Error(`the ${phase} script needs the integration id`);
    const route = withId ? `/integrations/{id}/scripts/${phase}` : `/integrations/scripts/${phase}`;
    const path = withId ? `/integrations/${enc(args.id!)}/scripts/${phase}` : route;
    return this.call({
      method: 'POST', route, path, auth: 'integration', body: phase === 'delete' ? undefined : args.body,
      accept: 'text/plain, application/json',
      parse: (r) => scriptText(contentType(r), r.text),
    });
  }

  // ---- webhooks -----------------------------------------------------------------------------

  listWebhooks(): Promise<LiveWebhook[]> {
    return this.call({
      method: 'GET', route: '/webhooks', path: '/webhooks', auth: 'webhook',
      // (interface 4.3 does not say the webhook objects come as a bare array: an envelope is read too)
      parse: (r) => wholeList(json(r), ['webhooks'], 'webhooks', 'GET', '/webhooks').map(toLiveWebhook),
    });
  }

  getWebhook(id: string): Promise<LiveWebhook> {
    return this.call({
      method: 'GET', route: '/webhooks/{id}', path: `/webhooks/${enc(id)}`, auth: 'webhook',
      parse: (r) => toLiveWebhook(json(r)),
    });
  }

  async createWebhooks(items: WebhookInput[], options: { preexisting?: () => ReadonlySet<string> } = {}): Promise<WebhookCreateResponse> {
    const found: LiveWebhook[] = [];
    /** The items of the last request sent (after a lost answer, only those not found live). */
    let last = items;
    const res = await this.call<WebhookCreateResponse>({
      method: 'POST', route: '/webhooks', path: '/webhooks', auth: 'webhook', body: { webhooks: items },
      parse: (r) => toWebhookCreateResponse(json(r)),
      listLags: true,
      recover: async (sent) => {
        const pending = (sent as { webhooks: WebhookInput[] }).webhooks;
        const claimed = new Set([...(options.preexisting?.() ?? []), ...found.map((w) => w.id)]);
        const split = splitCreatedWebhooks(await this.listWebhooks(), pending, claimed);
        found.push(...split.found);
        if (split.found.length) this.logger.warn({ names: split.found.map((w) => w.name) }, ANSWER_LOST);
        last = split.missing;
        return split.missing.length ? { body: { webhooks: split.missing } } : { result: { createdWebhooks: [], errors: [] } };
      },
    });
    // An error's `index` is a position in the request it answers: after a re-send of the missing items only, it is
    // given back as the position in `items` (index 0 of the re-sent list was taken for the batch's first item, a
    // webhook the first request had created, and its failure for that one's).
    const errors = last === items ? res.errors : res.errors.map((e) => webhookErrorAt(e, last, items));
    return { createdWebhooks: [...found, ...res.createdWebhooks], errors };
  }

  deleteWebhook(id: string): Promise<LiveWebhook> {
    return this.call({
      method: 'DELETE', route: '/webhooks/{id}', path: `/webhooks/${enc(id)}`, auth: 'webhook',
      parse: (r) => toLiveWebhook(json(r)),
    });
  }

  // ---- object-store data sources ----------------------------------------------------------------

  async listDataSources(options: { unfinishedDeletes?: ReadonlySet<string> } = {}): Promise<LiveDataSource[]> {
    const path = this.dsPath;
    try {
      return await this.call({ method: 'GET', route: path, path, auth: 'integration', parse: (r) => toDataSourceList(json(r), 'GET', path, options.unfinishedDeletes) });
    } catch (err) {
      if (err instanceof ApiError && (err.statusCode === 404 || err.statusCode === 405)) throw new DataSourcesUnsupportedError(err.statusCode, 'GET', path);
      throw err;
    }
  }

  getDataSource(id: string): Promise<LiveDataSource> {
    const path = `${this.dsPath}/${enc(id)}`;
    return this.call({
      method: 'GET', route: `${this.dsPath}/{id}`, path, auth: 'integration',
      parse: (r) => {
        const body = json(r);
        const d = toLiveDataSource(body);
        if (!d) throw new ApiError(200, 'Invalid response', 'expected a data source record', 'GET', path, r.text);
        // A record marked deleted is no live data source (the list leaves it out): taken for one, `state adopt`
        // recorded it and the next plan created another in its place. As the list: not found.
        if (softDeleted(body)) throw new ApiError(404, 'Not Found', `data source ${id} is deleted (its record is marked deleted)`, 'GET', path);
        return d;
      },
    });
  }

  /**
   * POST {type, integrationId, dataSources}. After an ambiguous failure the data sources now live with this
   * integration and prefix are this request's; only the others are sent again. Ids the answer leaves out
   * are looked up by (integration, prefix).
   */
  async createDataSources(integrationId: string, items: DataSourceInput[], options: { preexisting?: ReadonlySet<string> } = {}): Promise<LiveDataSource[]> {
    const path = this.dsPath;
    const bodyOf = (list: DataSourceInput[]) => ({ type: DATA_SOURCE_INTEGRATION_TYPE, integrationId: wireIntegrationId(integrationId), dataSources: list });
    const recovered: LiveDataSource[] = [];
    let sent = items;
    const lookUp = async (pending: DataSourceInput[]): Promise<{ found: LiveDataSource[]; missing: DataSourceInput[] }> => {
      const listed = await this.listDataSources();
      const live = new Map(listed.map((d) => [dataSourceKey(d.integrationId, d.prefix), d]));
      // A record that names no integration belongs to the one whose location holds its prefix (docs/decisions.md,
      // "Reading bodies"): this request's, which holds every prefix it sends, and was planned only because no record
      // of that prefix was its own yet. Except a record live before the request (`preexisting`): with nested
      // locations one at the same prefix may be another integration's (another team's), never this create's.
      const before = options.preexisting ?? new Set<string>();
      const unattributed = new Map(listed.filter((d) => d.integrationId === '' && !before.has(d.id)).map((d) => [d.prefix, d]));
      const found: LiveDataSource[] = [];
      const missing: DataSourceInput[] = [];
      for (const item of pending) {
        const hit = live.get(dataSourceKey(integrationId, item.prefix)) ?? unattributed.get(item.prefix);
        if (hit) found.push(hit);
        else missing.push(item);
      }
      return { found, missing };
    };
    const res = await this.call<{ found: LiveDataSource[]; missing: DataSourceInput[] }>({
      method: 'POST', route: path, path, auth: 'integration', body: bodyOf(items),
      parse: (r) => toCreatedDataSources(json(r), integrationId, sent),
      recover: async () => {
        const split = await lookUp(sent);
        recovered.push(...split.found);
        if (split.found.length) this.logger.warn({ prefixes: split.found.map((d) => d.prefix) }, ANSWER_LOST);
        sent = split.missing;
        return sent.length ? { body: bodyOf(sent) } : { result: { found: [], missing: [] } };
      },
    });
    let found = [...recovered, ...res.found];
    if (res.missing.length) {
      const split = await lookUp(res.missing);
      if (split.missing.length) {
        throw new ApiError(200, 'Invalid response', `the create answered without the id of ${split.missing.map((d) => d.prefix).join(', ')}, and the list does not show it`, 'POST', path);
      }
      found = [...found, ...split.found];
    }
    const byPrefix = new Map(found.map((d) => [d.prefix, d]));
    return items.map((i) => ({ ...byPrefix.get(i.prefix)!, integrationId: byPrefix.get(i.prefix)!.integrationId || integrationId }));
  }

  async deleteDataSource(id: string): Promise<boolean> {
    const c = {
      method: 'DELETE', route: `${this.dsDeletePath}/{id}`, path: `${this.dsDeletePath}/${enc(id)}`, auth: 'integration' as const,
      parse: () => undefined,
    };
    const notFound = (err: unknown): boolean => err instanceof ApiError && err.statusCode === 404;
    try {
      await this.call(c);
    } catch (err) {
      if (notFound(err)) return false;
      throw err;
    }
    // The first DELETE may be a soft delete (the data source is disabled, still listed): the second removes
    // it. A 404 now means the first one already did.
    try {
      await this.call(c);
    } catch (err) {
      if (!notFound(err)) throw err;
    }
    return true;
  }

  // ---- webhook deliveries (history, retry, actions) --------------------------------------------

  listWebhookHistory(query: WebhookHistoryQuery = {}): Promise<WebhookHistoryPage> {
    const path = `/webhooks/history${historyQueryString(query)}`;
    return this.call({
      method: 'GET', route: '/webhooks/history', path, auth: 'webhook',
      parse: (r) => toHistoryPage(json(r), 'GET', path),
    });
  }

  retryWebhookDelivery(historyId: string): Promise<WebhookHistoryRecord> {
    const path = `/webhooks/history/retry/${enc(historyId)}`;
    return this.call({
      method: 'POST', route: '/webhooks/history/retry/{id}', path, auth: 'webhook',
      parse: (r) => toHistoryRecord(json(r)),
      // A retry is a new delivery: after an ambiguous failure (timeout, reset after sending, any 5xx)
      // it may have happened, so it is not re-sent (no duplicate delivery). Refused connections and 429
      // ("not processed") are still retried.
      recover: () => {
        throw new TransportError(
          `retry of webhook delivery ${historyId} may have reached the service (ambiguous failure); not re-sent, ` +
            'to avoid delivering twice. Check `govops webhooks history` before retrying again',
          'POST',
          path,
        );
      },
    });
  }

  listWebhookActions(): Promise<string[]> {
    return this.call({
      method: 'GET', route: '/webhooks/actions', path: '/webhooks/actions', auth: 'webhook',
      parse: (r) => toActions(json(r)),
    });
  }

  async close(withinMs?: number): Promise<void> {
    await this.transport.close(withinMs);
  }

  // ---- the request loop ---------------------------------------------------------------------

  private headers(auth: Auth, hasBody: boolean, accept: string): Record<string, string> {
    const h: Record<string, string> = {
      accept,
      authorization: auth === 'webhook' ? `Bearer ${this.token}` : this.token,
    };
    if (hasBody) h['content-type'] = 'application/json';
    if (this.userAgent) h['user-agent'] = this.userAgent;
    return h;
  }

  /**
   * Look a create up after an ambiguous failure. When the lookup itself fails, the create's outcome is
   * unknown: a TransportError (never the lookup's own error, which could read as "not processed").
   */
  private async recover<T>(c: Call<T>, recover: (body: unknown) => Promise<Recovery<T>>, body: unknown): Promise<Recovery<T>> {
    try {
      return await recover(body);
    } catch (err) {
      // The recovery's own verdict passes; a failure of the lookup (another request) never reads as this call's.
      if (err instanceof CancelledError || (err instanceof TransportError && err.method === c.method && err.path === c.path)) throw err;
      throw new TransportError(
        `the create may have reached the service, and looking it up failed: ${(err as Error).message}; not re-sent (the next run finds it by its identity)`,
        c.method, c.path, err, ErrorCode.createUnsettled,
      );
    }
  }

  /**
   * Wait before a retry; the stop signal ends the wait with CancelledError. A retry that would start after the run's
   * deadline is not waited for: DeadlineError at once, with `failure()` (what the last attempt ends with) as its cause.
   */
  private async pause(c: { method: string; path: string }, ms: number, failure: () => unknown): Promise<void> {
    if (this.deadline && this.deadline.clock.monotonic() + ms >= this.deadline.at) {
      const cause = failure();
      const text = cause instanceof ApiError ? cause.toString() : (cause as Error).message;
      throw new DeadlineError(`${text}; not retried: its retry (in ${Math.ceil(ms / 1000)} s) would start after the apply --timeout`, c.method, c.path, cause);
    }
    try {
      await sleep(this.clock, ms, this.stopSignal);
    } catch (err) {
      if (isAbortError(err)) throw new CancelledError('retry abandoned: govops is shutting down');
      throw err;
    }
  }

  /**
   * One request, with the client's retries: the only layer that repeats a request after a network error, a 5xx,
   * a 408 or a 429 (the failure catalogue's `client` codes), at most `retries + 1` attempts in all. A create
   * (`c.recover`) is never re-sent blindly: after any failure that may have reached the service (a 5xx, a
   * timeout, a reset) its resource is looked up by natural key first, and only what is missing is sent again.
   */
  private async call<T>(c: Call<T>): Promise<T> {
    const progress: CallProgress = { body: c.body, maybeSent: false };
    for (let index = 0; ; index++) {
      const at: Attempt = { index, last: index >= this.policy.retries, started: performance.now() };
      const outcome = await this.attempt(c, progress, at);
      if (outcome !== 'again') return outcome.result;
    }
  }

  private async attempt<T>(c: Call<T>, progress: CallProgress, at: Attempt): Promise<AttemptOutcome<T>> {
    // (only when there is a wait: otherwise the write gate is asked in the same tick the request was made)
    if (this.heldOff.until > this.clock.monotonic()) await this.waitRetryAfter(c);
    const gate = this.writeGate && c.method !== 'GET' && !/[?&]dryRun=true\b/.test(c.path) ? this.writeGate : undefined;
    // asked before the request is queued, and again when it is written to a connection (transport.ts)
    gate?.(c.method, c.path);
    let res: RawResponse;
    try {
      res = await this.send(c, progress.body, gate ? () => gate(c.method, c.path) : undefined);
    } catch (err) {
      return this.afterSendFailure(c, progress, at, err);
    }
    return this.afterAnswer(c, progress, at, res);
  }

  /**
   * Before any attempt: what is left of the wait the service asked for (`Retry-After` on a 429 or 503 answer to any
   * request of this client), so the next request (another call running beside, the daemon's next reconcile, a create's
   * lookup) is not sent before it, whatever its own backoff. Within the run's deadline, or not sent (DeadlineError
   * whose cause says it was never sent); the stop signal ends the wait.
   */
  private async waitRetryAfter(c: { method: string; path: string }): Promise<void> {
    const wait = this.heldOff.until - this.clock.monotonic();
    if (wait <= 0) return;
    const status = this.heldOff.status;
    this.logger.debug({ method: c.method, path: c.path, waitMs: Math.ceil(wait) }, 'waiting for the Retry-After the service asked for');
    await this.pause(c, wait, () =>
      new TransportError(
        `not sent: the service asked govops to wait (Retry-After on a ${status} answer) ${Math.ceil(wait / 1000)} s more`,
        c.method, c.path, undefined, ErrorCode.connectFailed,
      ),
    );
  }

  /** A 429 or 503 answer's `Retry-After` (clamped to `maxRetryAfterMs`): the client sends nothing before it ends. */
  private noteRetryAfter(res: RawResponse): number | undefined {
    if (res.status !== 429 && res.status !== 503) return undefined;
    // the time of day: an HTTP-date Retry-After is one
    const ms = parseRetryAfter(res.headers['retry-after'], this.clock.now(), this.policy.maxRetryAfterMs);
    if (ms === undefined) return undefined;
    const until = this.clock.monotonic() + ms;
    if (until > this.heldOff.until) Object.assign(this.heldOff, { until, status: res.status });
    return ms;
  }

  /**
   * A create's lookup after an attempt that may have landed: its result when found, else less to send again. When the
   * list may lag (`c.listLags`), what is missing is looked for again (backoff pauses on the clock) until `listLagMs`
   * after the first lookup: a re-send while the list has not caught up yet makes a second copy, and so does the next
   * run when it still lags (its pending intent, not found, is dropped). The stop signal and the run's deadline end
   * the wait as an unknown outcome (not re-sent).
   */
  private async lookUp<T>(c: Call<T>, progress: CallProgress): Promise<{ result: T } | undefined> {
    progress.maybeSent = true;
    const until = this.clock.monotonic() + (c.listLags ? this.listLagMs : 0);
    for (let look = 0; ; look++) {
      const r = await this.recover(c, c.recover!, progress.body);
      if ('result' in r) return r;
      progress.body = r.body;
      const left = until - this.clock.monotonic();
      if (left <= 0) return undefined;
      const wait = Math.min(left, Math.max(this.policy.baseDelayMs, backoffDelay(look, this.policy, this.random)));
      await this.pause(c, wait, () =>
        new TransportError(
          `the create may have reached the service and is not listed yet (the list may lag behind writes); not re-sent (the next run finds it by its identity)`,
          c.method, c.path, undefined, ErrorCode.createUnsettled,
        ),
      );
    }
  }

  /** An attempt that got no answer (network error, timeout, cancellation): retried, looked up, or thrown. */
  private async afterSendFailure<T>(c: Call<T>, progress: CallProgress, at: Attempt, err: unknown): Promise<AttemptOutcome<T>> {
    // stopped before a byte left: a forced stop, or the write gate refusing it at the connection (never retried)
    if (err instanceof CancelledError || (err instanceof UserError && err.code === ErrorCode.stateFenced)) {
      this.report(c, 0, at.started, at.index, err.code);
      throw err;
    }
    // an answer too large to read: the service's fault, not the network's (never retried)
    if (err instanceof ResponseTooLargeError) {
      this.report(c, 0, at.started, at.index, err.code);
      const tooLarge = Object.assign(new ApiError(err.status, 'Response Too Large', err.message, c.method, c.path), { url: `${this.transport.baseUrl}${c.path.split('?')[0]}` });
      // a create answered 2xx was carried out, whatever its answer holds: looked up as any unreadable answer
      if (c.recover && err.status >= 200 && err.status < 300) return this.unreadableCreate(c, progress, at, err.status, tooLarge);
      throw tooLarge;
    }
    const low = errorCode(err) ?? 'UNKNOWN';
    const code = transportFailureCode(low);
    this.report(c, 0, at.started, at.index, low);
    this.logger.debug({ method: c.method, path: c.path, attempt: at.index, code: low }, 'request failed');
    const unsettled = code === ErrorCode.createUnsettled;
    const retryable = isRetryableTransportError(err);
    if ((retryable || unsettled) && c.recover && transportPhase(err) === 'ambiguous') {
      // Even after the last attempt: if the resource is there, the create worked.
      const found = await this.lookUp(c, progress);
      if (found) return found;
    }
    if (unsettled) {
      throw new TransportError(
        `${(err as Error).message}: the create may still be processed, so it is not re-sent (the next run finds it by its identity)`,
        c.method, c.path, err, ErrorCode.createUnsettled,
      );
    }
    const failed = (): TransportError =>
      new TransportError(
        `${(err as Error).message ?? String(err)} (${low}) after ${counted(at.index + 1, 'attempt')}`,
        c.method, c.path, err, progress.maybeSent && c.recover ? ErrorCode.createUnsettled : code,
      );
    if (!retryable || at.last) throw failed();
    await this.pause(c, backoffDelay(at.index, this.policy, this.random), failed);
    return 'again';
  }

  /** An attempt that got an answer: its result (2xx), a lookup, a retry, or the answer's error. */
  private async afterAnswer<T>(c: Call<T>, progress: CallProgress, at: Attempt, res: RawResponse): Promise<AttemptOutcome<T>> {
    this.report(c, res.status, at.started, at.index);
    this.logger.debug({ method: c.method, path: c.path, status: res.status, attempt: at.index }, 'request');
    if (res.status >= 200 && res.status < 300) return this.accepted(c, progress, at, res);
    const retryAfter = this.noteRetryAfter(res);
    if (c.recover && (ambiguousStatus(res.status) || (res.status === 409 && progress.maybeSent))) {
      // A 5xx may come after the service acted (a gateway that gave up on a slow origin); a 409 after such an
      // answer says an earlier attempt did reach the service. Either way: look the resource up first.
      const found = await this.lookUp(c, progress);
      if (found) return found;
    }
    // Not found: sent again (only what is missing), within the client's attempts.
    const again = clientRetriesStatus(res.status, c.method) || (c.recover !== undefined && res.status === 409 && progress.maybeSent);
    if (again && !at.last) {
      // Retry-After: what is left of it (a create's lookup may have waited part of it), else the backoff
      const delay = retryAfter !== undefined ? Math.max(0, this.heldOff.until - this.clock.monotonic()) : backoffDelay(at.index, this.policy, this.random);
      await this.pause(c, delay, () => this.answerFailure(c, progress, at, res));
      return 'again';
    }
    throw this.answerFailure(c, progress, at, res);
  }

  /** The error a call ends with after this answer, not retried: the answer's, or an unknown outcome for a create. */
  private answerFailure<T>(c: Call<T>, progress: CallProgress, at: Attempt, res: RawResponse): ApiError | TransportError {
    const err = this.apiError(res, c);
    // After an attempt that may have landed, no answer proves the create did not happen: the outcome is unknown.
    if (c.recover && progress.maybeSent) {
      return new TransportError(
        `the create may have reached the service (${err.statusCode} ${err.error} after ${counted(at.index + 1, 'attempt')}) and is not listed yet; not re-sent (the next run finds it by its identity)`,
        c.method, c.path, err, ErrorCode.createUnsettled,
      );
    }
    return err;
  }

  /**
   * A 2xx answer. A create's answer that cannot be read (a proxy's page, an empty or truncated body) says it was
   * carried out, not what it made: its resource is looked up by identity like a lost answer, and when it is not
   * listed yet the outcome is unknown (GOVOPS_CREATE_UNSETTLED, never re-sent), never "not processed".
   */
  private async accepted<T>(c: Call<T>, progress: CallProgress, at: Attempt, res: RawResponse): Promise<{ result: T }> {
    try {
      return { result: this.parseAnswer(c, res) };
    } catch (err) {
      if (!c.recover || !(err instanceof ApiError) || err.code !== ErrorCode.apiInvalidResponse) throw err;
      return this.unreadableCreate(c, progress, at, res.status, err);
    }
  }

  /** A create's 2xx answer that could not be read: its resource looked up, else an unknown outcome (never re-sent). */
  private async unreadableCreate<T>(c: Call<T>, progress: CallProgress, at: Attempt, status: number, unreadable: ApiError): Promise<{ result: T }> {
    const found = await this.lookUp(c, progress);
    if (found) return found;
    throw new TransportError(
      `the service accepted the create (${status}) but its answer could not be read (${unreadable.message}), and it is not listed yet; ` +
        `not re-sent (the next run finds it by its identity) after ${counted(at.index + 1, 'attempt')}`,
      c.method, c.path, unreadable, ErrorCode.createUnsettled,
    );
  }

  /** The result of a 2xx answer; a body that is not JSON is the answer's ApiError. */
  private parseAnswer<T>(c: Call<T>, res: RawResponse): T {
    try {
      return c.parse(res);
    } catch (err) {
      if (err instanceof SyntaxError) throw this.apiError(res, c);
      throw err;
    }
  }

  /** The ApiError of an answer, with the URL it came from (and whether a govops daemon gave it). */
  private apiError(res: RawResponse, c: { method: string; path: string }): ApiError {
    const err = apiErrorFrom(res.status, res.text, c.method, c.path);
    err.url = `${this.transport.baseUrl}${c.path.split('?')[0]}`;
    if (res.headers['x-govops'] === 'daemon') err.fromGovopsDaemon = true;
    return err;
  }

  /** One attempt of a call through the transport (a create waits for its answer until it settles). */
  private send<T>(c: Call<T>, body: unknown, beforeWrite?: () => void): Promise<RawResponse> {
    return this.transport.send({
      method: c.method,
      path: c.path,
      headers: this.headers(c.auth, body !== undefined, c.accept ?? 'application/json'),
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: this.timeoutMs,
      // A create is waited for until it settles: re-sending one still in flight makes a duplicate.
      ...(c.recover
        ? {
            settleMs: this.settleMs,
            onSlow: () =>
              this.logger.warn(
                { method: c.method, path: c.path, timeoutMs: this.timeoutMs, settleMs: this.settleMs },
                'create slower than the request timeout: waiting for its answer before doing anything else',
              ),
          }
        : {}),
      ...(this.forceSignal ? { signal: this.forceSignal } : {}),
      ...(beforeWrite ? { beforeWrite } : {}),
    });
  }

  private report(c: { method: string; route: string }, status: number, started: number, attempt: number, error?: string): void {
    if (!this.onRequest) return;
    const event: RequestEvent = { method: c.method, route: c.route, status, durationMs: performance.now() - started, attempt };
    if (error) event.error = error;
    try {
      this.onRequest(event);
    } catch (err) {
      this.logger.warn({ err }, 'onRequest hook threw');
    }
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function dryQuery(dry: boolean | undefined): string {
  return dry ? '?dryRun=true' : '';
}
