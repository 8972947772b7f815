/**
 * What the rest of govops needs from the service. Implemented over HTTP by `ServiceClient`
 * (src/api/client.ts); ids always come back as strings.
 */
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
import type { ScriptPhase } from '../service/kinds.js';
import type { Clock } from '../util/clock.js';

export interface MutationOptions {
  dryRun?: boolean;
}

/** When a run ends: `at` on `clock.monotonic()` (the run's own clock, which the client's need not be). */
export interface RunDeadline {
  clock: Clock;
  at: number;
}

export interface ServiceApi {
  listIntegrations(): Promise<LiveIntegration[]>;
  /** GET /integrations, keeping only each item's id and status (and the body's size). */
  listIntegrationStatuses(): Promise<IntegrationStatusList>;
  getIntegration(id: string): Promise<LiveIntegration>;
  createIntegration(body: IntegrationBody, options?: MutationOptions): Promise<IntegrationMutationResult>;
  updateIntegration(id: string, body: IntegrationBody, options?: MutationOptions): Promise<IntegrationMutationResult>;
  deleteIntegration(
    id: string,
    payload: Record<string, unknown> | undefined,
    options?: MutationOptions,
  ): Promise<IntegrationMutationResult>;
  getIntegrationStatus(id: string): Promise<IntegrationStatus>;
  /** Script endpoints: `id` for edit/delete, `body` for the others (and edit). Returns the script text. */
  generateScript(phase: ScriptPhase, args: { id?: string; body?: IntegrationBody }): Promise<string>;

  listWebhooks(): Promise<LiveWebhook[]>;
  getWebhook(id: string): Promise<LiveWebhook>;
  /**
   * One POST of one or more webhooks. After an answer that may have been lost, the live webhooks of these names
   * are this request's, except the ids `preexisting` gives (live before the request: never claimed as its own). It
   * is asked only then: most creates never need it, and it may cost a pass over the state. An item error's `index`
   * is a position in `items`, also when the POST that got it re-sent only some of them.
   */
  createWebhooks(items: WebhookInput[], options?: { preexisting?: () => ReadonlySet<string> }): Promise<WebhookCreateResponse>;
  deleteWebhook(id: string): Promise<LiveWebhook>;
  /** GET /webhooks/history: one page of delivery records. */
  listWebhookHistory(query?: WebhookHistoryQuery): Promise<WebhookHistoryPage>;
  /** POST /webhooks/history/retry/{id}: re-deliver; returns the resulting record. Never re-sent after an ambiguous failure. */
  retryWebhookDelivery(historyId: string): Promise<WebhookHistoryRecord>;
  /** GET /webhooks/actions: ALL_NOTIFICATIONS and every event name the service knows. */
  listWebhookActions(): Promise<string[]>;

  /**
   * Object-store data sources (interface 2.3; endpoints per docs/decisions.md, configurable). The list
   * throws DataSourcesUnsupportedError when the service has no list endpoint (404 or 405); soft-deleted
   * records are left out, except those at the ids of `unfinishedDeletes` (marked `softDeleted`): deletes govops sent
   * whose second, hard DELETE was not sent (an answer lost, a run killed), which the next plan finishes.
   */
  listDataSources(options?: { unfinishedDeletes?: ReadonlySet<string> }): Promise<LiveDataSource[]>;
  getDataSource(id: string): Promise<LiveDataSource>;
  /** Register several data sources of one integration in one request; one live record per item, in order. */
  /** `preexisting`: ids live before the request, never taken for one it created (a lost answer). */
  createDataSources(integrationId: string, items: DataSourceInput[], options?: { preexisting?: ReadonlySet<string> }): Promise<LiveDataSource[]>;
  /** Delete for good (a soft delete is followed by the second, hard delete). false: it was already gone. */
  deleteDataSource(id: string): Promise<boolean>;

  /**
   * The same API bound to a run's signals: `signal` ends retry sleeps (a request in flight still
   * finishes), `force` aborts requests in flight. Both end the call with CancelledError. With `deadline` (the
   * apply --timeout, on that clock's monotonic reading) no retry sleeps or starts past it: the call fails at once
   * with DeadlineError (GOVOPS_SETTLE_TIMEOUT).
   */
  withSignal(signal: AbortSignal, force?: AbortSignal, deadline?: RunDeadline): ServiceApi;

  /** Close once the requests in flight are answered; with `withinMs`, those still in flight then are aborted. */
  close(withinMs?: number): Promise<void>;
}
