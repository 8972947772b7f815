/**
 * Wire shapes of the service interface (service-interface.md parts 2 and 4).
 * The client normalises ids to strings before handing these to the rest of govops.
 */
import type { IntegrationType } from '../kinds/registry.js';

export interface ValidationTest {
  name: string;
  /** passed | failed | warning | skipped */
  status: string;
  result?: unknown[];
}

export interface ValidationResults {
  status: string;
  validationTests: ValidationTest[];
}

/** Body of a successful create / update / delete (and of their dry runs). */
export interface IntegrationMutationResult {
  id: string;
  status: string;
  validationResults: ValidationResults;
}

/**
 * Body of GET /integrations/{id} and each item of GET /integrations. Credentials masked. `type` is what the
 * service says, possibly a type govops does not know (another team's kind, a later release's): check it with
 * `isIntegrationType` before using it as one of govops' kinds.
 */
export interface LiveIntegration extends IntegrationMutationResult {
  type: string;
  autoBootstrap: boolean;
  config: Record<string, unknown>;
}

export interface IntegrationStatus {
  /** A number on the wire; normalised to string by the client. */
  id: string;
  status: string;
}

/** GET /integrations read for the statuses only (the status poller): each item's id and status, and the body's size. */
export interface IntegrationStatusList {
  items: IntegrationStatus[];
  /** Length of the response body (characters, ~bytes): what the next list is expected to cost. */
  bytes: number;
}

/** Body of POST /integrations and PUT /integrations/{id}. */
export interface IntegrationBody {
  type: IntegrationType;
  autoBootstrap?: boolean;
  config?: Record<string, unknown>;
}

export interface WebhookInput {
  url: string;
  name: string;
  global: boolean;
  notificationType: string[];
  actionType: 'triggered' | 'receive';
  secret?: string;
}

export interface LiveWebhook {
  id: string;
  name: string;
  url: string;
  notificationType: string[];
  global: boolean;
  actionType?: string | null;
  createdBy: number;
  createdAt?: string;
  updatedAt?: string;
}

export interface WebhookCreateResponse {
  createdWebhooks: LiveWebhook[];
  errors: unknown[];
}

/**
 * A delivery record of GET /webhooks/history (interface 2.13), normalised: ids are strings (the wire
 * has integers, a service may send strings), the webhook's id and name come from the record or its
 * `request`, and the response code (e.g. ESOCKETTIMEDOUT) is lifted out of `response.body.code`.
 */
export interface WebhookHistoryRecord {
  id: string;
  /** `webhooksId`, else `request.webhookId` ('' when neither is given). */
  webhookId: string;
  /** `name`, else `request.webhookName`. */
  webhookName: string;
  notificationType: string;
  /** 2xx is a success (interface 2.13: "200 is success"); NaN-free: 0 when missing. */
  statusCode: number;
  /** `response.body.code` (ESOCKETTIMEDOUT, ECONNREFUSED...), when the service recorded one. */
  responseCode?: string;
  /** `response.body.connect`, when given. */
  connect?: boolean;
  /** '' when missing. Shared by the deliveries of one event (and, in the sandbox, by their retries). */
  webhooksActivityId: string;
  createdAt: string;
  updatedAt?: string;
  url?: string;
  /** As received: `text`, `metadata`, `webhookId`, `webhookName`. */
  request: Record<string, unknown>;
  /** As received: empty, or `body` with `code` and `connect`. */
  response: Record<string, unknown>;
}

export interface WebhookHistoryPage {
  /** Total matching records; the wire sends a number or a numeric string. Undefined when absent or unreadable. */
  count?: number;
  records: WebhookHistoryRecord[];
}

/** Query of GET /webhooks/history (interface 4.3); every field optional, as on the wire. */
export interface WebhookHistoryQuery {
  offset?: number;
  pageSize?: number;
  sortField?: string;
  sortOrder?: 'asc' | 'desc';
  notificationType?: string;
  includeGlobal?: boolean;
  includeUser?: boolean;
  successOrFailure?: 'success' | 'failure';
}

/**
 * An object-store data source (interface 2.3 response: `dataSourceId`, `prefix`, `dataSourceName`),
 * normalised: the id is a string, and `integrationId` is the integration it is registered under (a string;
 * '' when the service's record does not say).
 */
export interface LiveDataSource {
  id: string;
  integrationId: string;
  dataSourceName: string;
  prefix: string;
  /**
   * The service marks the record deleted (its soft delete: the first DELETE): listed only when asked for by id
   * (`listDataSources` `unfinishedDeletes`: a delete of govops' whose second, hard DELETE was not sent).
   */
  softDeleted?: true;
}

/** One item of the create body's `dataSources` (interface 2.3). */
export interface DataSourceInput {
  dataSourceName: string;
  prefix: string;
}

/** Error body of every failing endpoint (interface part 7). */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
}
