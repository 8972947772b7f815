/** Webhook calls: deletes by id, creates in one batch POST whose `errors` are mapped to resources. */
import type { ServiceApi } from '../api/client-types.js';
import { notProcessed } from '../api/retry.js';
import type { LiveWebhook, WebhookInput } from '../api/types.js';
import { ApiError, ErrorCode } from '../errors.js';
import { isPlainObject } from '../util/object.js';
import { ApplyFailure } from './validation.js';

export async function deleteWebhook(api: ServiceApi, id: string): Promise<void> {
  try {
    await api.deleteWebhook(id);
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 404) return; // already gone
    throw err;
  }
}

/**
 * One input's outcome. A failure is `definite` when the service certainly did not create it (an item
 * error, a 4xx for the whole batch); otherwise it may exist (a 5xx, a lost answer, an accepted batch whose answer
 * leaves it out) and the next run looks it up by identity.
 */
export type BatchOutcome = { ok: true; webhook: LiveWebhook } | { ok: false; error: Error; definite: boolean };

function describeItemError(e: unknown): string {
  if (typeof e === 'string') return e;
  if (isPlainObject(e)) {
    if (typeof e.message === 'string') return e.message;
    if (typeof e.error === 'string') return e.error;
  }
  return JSON.stringify(e);
}

/** Which input an `errors` item is about: by `index`, or by `name` (also inside `webhook`). */
function errorTarget(e: unknown, items: readonly WebhookInput[]): number | undefined {
  if (!isPlainObject(e)) return undefined;
  if (typeof e.index === 'number' && items[e.index]) return e.index;
  const name = typeof e.name === 'string' ? e.name : isPlainObject(e.webhook) && typeof e.webhook.name === 'string' ? e.webhook.name : undefined;
  if (name === undefined) return undefined;
  const i = items.findIndex((it) => it.name === name);
  return i >= 0 ? i : undefined;
}

/** One POST for all new webhooks; every input gets an outcome (by name for created ones). */
export async function createWebhooks(
  api: ServiceApi,
  items: readonly WebhookInput[],
  preexisting?: () => ReadonlySet<string>,
): Promise<BatchOutcome[]> {
  if (items.length === 0) return [];
  let res;
  try {
    res = await api.createWebhooks([...items], preexisting ? { preexisting } : {});
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    return items.map(() => ({ ok: false as const, error, definite: notProcessed(err) }));
  }
  const outcomes: Array<BatchOutcome | undefined> = items.map(() => undefined);
  const unassigned: string[] = [];
  for (const e of res.errors ?? []) {
    const i = errorTarget(e, items);
    if (i === undefined) unassigned.push(describeItemError(e));
    else outcomes[i] = { ok: false, error: new ApplyFailure(ErrorCode.validationFailed, describeItemError(e)), definite: true };
  }
  const created = new Map((res.createdWebhooks ?? []).map((w) => [w.name, w]));
  return items.map((it, i) => {
    const w = created.get(it.name);
    if (w && !outcomes[i]) return { ok: true as const, webhook: w };
    if (outcomes[i]) return outcomes[i];
    // An error no item is named in is taken for the items the answer leaves out: refused.
    if (unassigned.length) {
      return { ok: false as const, error: new ApplyFailure(ErrorCode.validationFailed, `not created by the service: ${unassigned.join('; ')}`), definite: true };
    }
    // The service accepted the batch and says nothing of this one (a partial answer): it may exist. Its intent is
    // kept, never dropped as "not created" (the next run would take govops' own webhook for another's).
    return {
      ok: false as const,
      error: new ApplyFailure(
        ErrorCode.createUnsettled,
        'the service accepted the batch but its answer neither lists this webhook as created nor gives an error for it: ' +
          'it may exist; not re-sent (the next run finds it by its identity)',
      ),
      definite: false,
    };
  });
}
