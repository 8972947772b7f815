/**
 * Wire shapes of the service interface (service-interface.md parts 2 and 4).
 * The client normalises ids to strings before handing these to the rest of govops.
 */
import type { IntegrationType } from '../service/kinds.js';

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

/** Body of GET /integrations/{id} and each item of GET /integrations. Credentials masked. */
export interface LiveIntegration extends IntegrationMutationResult {
  type: IntegrationType;
  autoBootstrap: boolean;
  config: Record<string, unknown>;
}

export interface IntegrationStatus {
  /** A number on the wire; normalised to string by the client. */
  id: string;
  status: string;
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

export interface WebhookHistoryRecord {
  id: number;
  request: { text: string; metadata: Record<string, unknown>; webhookId: number; webhookName: string };
  response: { body?: { code?: string; connect?: boolean; [k: string]: unknown }; [k: string]: unknown };
  statusCode: number;
  notificationType: string;
  webhooksActivityId: number;
  createdAt: string;
  updatedAt: string;
  webhooksId?: number;
  url?: string;
  name?: string;
  actionType?: string | null;
  createdBy?: number;
}

export interface WebhookHistoryPage {
  count: number | string;
  records: WebhookHistoryRecord[];
}

/** Error body of every failing endpoint (interface part 7). */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
}
