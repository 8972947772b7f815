/** Internal state shapes of the sandbox's webhooks (interface parts 2.12, 2.13). */

export type ActionType = 'triggered' | 'receive';

/** A stored webhook, secret included (never returned on the wire). */
export interface StoredWebhook {
  id: number;
  url: string;
  name: string;
  global: boolean;
  notificationType: string[];
  actionType: ActionType | null;
  secret?: string;
  createdBy: number;
  createdAt: string;
  updatedAt: string;
}

/** `request` of a history record: exactly the JSON object POSTed to the receiver. */
export interface DeliveryRequest {
  text: string;
  metadata: Record<string, unknown>;
  webhookId: number;
  webhookName: string;
}

export interface DeliveryResponse {
  body?: unknown;
}

/** A history record as stored; webhook fields are copied so records outlive their webhook. */
export interface HistoryRecord {
  id: number;
  request: DeliveryRequest;
  response: DeliveryResponse;
  statusCode: number;
  notificationType: string;
  webhooksActivityId: number;
  createdAt: string;
  updatedAt: string;
  webhooksId: number;
  url: string;
  name: string;
  actionType: ActionType | null;
  createdBy: number;
  /** Whether the webhook was global when delivered (drives includeGlobal; not on the wire). */
  global: boolean;
}

/** Who caused an event (metadata.actionBy / actionByName). */
export interface Actor {
  userId: number;
  userName: string;
}

export interface EmitResult {
  webhooksActivityId: number;
  /** Number of deliveries started. */
  deliveries: number;
}
