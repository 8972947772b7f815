/**
 * Confirming recorded ids a list left out. A service's lists may lag behind its writes (a replicated read: an
 * integration created a moment ago is not listed yet), so a recorded id missing from `GET /integrations` (or
 * `GET /webhooks`) is not taken as gone: `GET /integrations/{id}` (`GET /webhooks/{id}`) decides before anything
 * is planned for it. Present: it joins the live list (and goes through the identity check like any listed item);
 * 404: gone. Any other failure stops the reconcile (nothing can be concluded). In a steady state every recorded id
 * is listed and nothing is asked.
 */
import type { ServiceApi } from '../api/client-types.js';
import type { LiveIntegration, LiveWebhook } from '../api/types.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../log.js';
import type { GovopsState } from '../state/types.js';

/** Lookups in flight at once. */
const CONCURRENCY = 8;

export interface Listed {
  integrations: LiveIntegration[];
  webhooks: LiveWebhook[];
}

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The lists with every recorded id they left out and the service still has (asked one by one). */
export async function confirmRecorded(api: ServiceApi, state: GovopsState, listed: Listed, log?: Logger): Promise<Listed> {
  const integrationIds = new Set(listed.integrations.map((l) => l.id));
  const webhookIds = new Set(listed.webhooks.map((l) => l.id));
  const missing = state.resources.filter(
    (r) => r.id !== '' && ((r.kind === 'Integration' && !integrationIds.has(r.id)) || (r.kind === 'Webhook' && !webhookIds.has(r.id))),
  );
  if (missing.length === 0) return listed;
  const integrations = [...listed.integrations];
  const webhooks = [...listed.webhooks];
  const found: string[] = [];
  await eachLimited(missing, CONCURRENCY, async (r) => {
    try {
      if (r.kind === 'Integration') {
        const l = await api.getIntegration(r.id);
        if (l.id !== r.id || integrationIds.has(l.id)) return;
        integrationIds.add(l.id);
        integrations.push(l);
      } else {
        const l = await api.getWebhook(r.id);
        if (l.id !== r.id || webhookIds.has(l.id)) return;
        webhookIds.add(l.id);
        webhooks.push(l);
      }
      found.push(`${r.kind}/${r.name} (id ${r.id})`);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) return;
      throw err;
    }
  });
  if (found.length) log?.info({ found }, 'recorded ids missing from the list exist: the list lags behind writes');
  return { integrations, webhooks };
}
