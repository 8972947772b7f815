/**
 * A webhook create that got no answer and that the service does not list yet (its list lags): kept pending for
 * WEBHOOK_CREATE_HOLD_MS from when the intent was recorded, and the manifest's create blocked meanwhile
 * (`create-unsettled`). Dropped at once (before), the next run sent the create again while the first was still
 * unlisted: the service held two webhooks of that name and url, one owned by no one, and every event went out twice.
 */
import { describe, expect, it } from 'vitest';
import { WEBHOOK_CREATE_HOLD_MS } from '../../src/plan/held-create.js';
import { resolvePending } from '../../src/plan/pending.js';
import { planChanges } from '../../src/plan/planner.js';
import { webhookIdentity } from '../../src/service/kinds.js';
import type { ManagedResource } from '../../src/state/types.js';
import { SHAPES, liveWebhookOf, owned, stateWith, webhook } from './fixtures.js';

const SENT = Date.parse('2026-11-28T08:00:00.000Z');
const hook = webhook('h');
const intent: ManagedResource = {
  ...owned(hook, ''),
  pending: 'create',
  key: hook.body.name,
  identity: webhookIdentity(hook.body.name, hook.body.url),
  updatedAt: new Date(SENT).toISOString(),
};
const options = { prune: true, allowReplace: false };
const planAt = (now: number | undefined, webhooks = [] as ReturnType<typeof liveWebhookOf>[]) =>
  planChanges({ desired: [hook], live: { integrations: [], webhooks }, state: stateWith(intent), options, shapes: SHAPES, ...(now !== undefined ? { now } : {}) });

describe('a webhook create sent without an answer, not listed yet', () => {
  it('within the hold: kept pending, and the create is blocked, not sent again', () => {
    const kept = resolvePending(stateWith(intent), { integrations: [], webhooks: [] }, SENT + 30_000);
    expect(kept.state.resources).toEqual([intent]);
    expect(kept.notes.join('\n')).toMatch(/not listed yet; kept pending until 2026-11-28T08:02:00.000Z/);
    const p = planAt(SENT + 30_000);
    expect(p.changes.map((c) => [c.action, c.name, c.blocked?.code])).toEqual([['create', 'h', 'create-unsettled']]);
    expect(p.changes[0]!.blocked!.message).toMatch(/not sent again before 2026-11-28T08:02:00.000Z/);
    expect(p.changes[0]!.reasons.map((r) => r.code)).not.toContain('recorded-id-missing');
  });

  it('listed meanwhile: recorded as govops\' own, nothing created', () => {
    const p = planAt(SENT + 30_000, [liveWebhookOf(hook, '41')]);
    expect(p.changes.map((c) => [c.action, c.name, c.liveId, c.blocked])).toEqual([['noop', 'h', '41', undefined]]);
  });

  it('once the hold has passed: the intent is dropped and the create planned again', () => {
    expect(resolvePending(stateWith(intent), { integrations: [], webhooks: [] }, SENT + WEBHOOK_CREATE_HOLD_MS).state.resources).toEqual([]);
    const p = planAt(SENT + WEBHOOK_CREATE_HOLD_MS);
    expect(p.changes.map((c) => [c.action, c.name, c.blocked])).toEqual([['create', 'h', undefined]]);
  });

  it('an intent dated far in the future (a clock set back) is not held for ever', () => {
    const p = planAt(SENT - 10 * WEBHOOK_CREATE_HOLD_MS);
    expect(p.changes[0]!.blocked).toBeUndefined();
  });
});
