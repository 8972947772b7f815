/**
 * What a delivery sends (pure): the JSON object `{ text, metadata, webhookId, webhookName }`, which
 * is also the history record's `request` (2.13). `text` is a human-readable line (chat-compatible);
 * `metadata` holds the 2.13 fields, filled from the emitted metadata, the actor and defaults.
 */
import type { Actor, DeliveryRequest, StoredWebhook } from './types.js';

/** The 2.13 metadata fields with defaults; emitted metadata overrides them, extra keys are kept. */
export function buildMetadata(
  notificationType: string,
  emitted: Record<string, unknown>,
  actor: Actor | undefined,
): Record<string, unknown> {
  const actionBy = actor?.userId ?? null;
  const actionByName = actor?.userName ?? null;
  return {
    modelId: null,
    actionBy,
    modelType: null,
    targetUser: actionBy,
    projectName: null,
    targetGroup: null,
    actionByName,
    targetUserName: actionByName,
    notifyInitiator: false,
    ...emitted,
    notificationType,
  };
}

function describe(metadata: Record<string, unknown>): string {
  const parts: string[] = [];
  const { modelType, modelId, projectName, targetUserName, targetGroup } = metadata;
  if (modelId !== null && modelId !== undefined) parts.push(`${typeof modelType === 'string' ? modelType : 'model'} ${String(modelId)}`);
  if (typeof projectName === 'string') parts.push(`project "${projectName}"`);
  if (typeof targetUserName === 'string' && targetUserName !== metadata.actionByName) parts.push(`user ${targetUserName}`);
  if (targetGroup !== null && targetGroup !== undefined) parts.push(`group ${typeof targetGroup === 'string' ? targetGroup : JSON.stringify(targetGroup)}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

export function buildText(notificationType: string, metadata: Record<string, unknown>): string {
  const by = typeof metadata.actionByName === 'string' ? ` by ${metadata.actionByName}` : '';
  return `${notificationType}${by}${describe(metadata)}`;
}

export function buildRequest(
  webhook: Pick<StoredWebhook, 'id' | 'name'>,
  notificationType: string,
  metadata: Record<string, unknown>,
): DeliveryRequest {
  return { text: buildText(notificationType, metadata), metadata, webhookId: webhook.id, webhookName: webhook.name };
}

/** The exact bytes POSTed (and signed): the request object with a fixed key order. */
export function rawBodyOf(request: DeliveryRequest): string {
  return JSON.stringify({
    text: request.text,
    metadata: request.metadata,
    webhookId: request.webhookId,
    webhookName: request.webhookName,
  });
}
