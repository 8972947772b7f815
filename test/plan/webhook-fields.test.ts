/**
 * Webhook fields come from one list (src/service/webhook-fields.ts): for every field in it, the normaliser
 * reads it, the desired builder builds it, the diff compares it and the facts fingerprint it. A field added to
 * the list is covered here without another line of test; one missed in a place fails here.
 */
import { describe, expect, it } from 'vitest';
import { toLiveWebhook } from '../../src/api/normalize.js';
import type { WebhookInput } from '../../src/api/types.js';
import type { WebhookManifest } from '../../src/manifests/types.js';
import { toDesired } from '../../src/plan/desired.js';
import { webhookFields } from '../../src/plan/facts.js';
import type { DesiredWebhook } from '../../src/plan/types.js';
import { diffWebhook } from '../../src/plan/webhooks.js';
import { comparable } from '../../src/plan/shape.js';
import { WEBHOOK_FIELDS, WEBHOOK_FIELD_NAMES, type WebhookField, type WebhookFieldRule } from '../../src/service/webhook-fields.js';
import { HASH } from './fixtures.js';

// The list and the body type name the same fields (a field added to one and not the other does not compile).
const _listed: Record<Exclude<keyof WebhookInput, 'secret'>, WebhookFieldRule> = WEBHOOK_FIELDS;
const _typed: Record<WebhookField, unknown> = {} as Record<Exclude<keyof WebhookInput, 'secret'>, unknown>;
void _listed;
void _typed;

const BASE = { name: 'hook', url: 'https://hooks.example.com/a', global: false, notificationType: ['modelCreated'], actionType: 'triggered' };

/** Two values of a field's type that differ (as sets too). */
function values(rule: WebhookFieldRule): [unknown, unknown] {
  switch (rule.type) {
    case 'string':
      return ['triggered', 'receive'];
    case 'boolean':
      return [false, true];
    case 'string[]':
      return [['modelCreated'], ['modelCreated', 'modelDeleted']];
  }
}

function desired(spec: Record<string, unknown>, name: string): DesiredWebhook {
  const m = { apiVersion: 'govops/v1', kind: 'Webhook', metadata: { name }, spec } as unknown as WebhookManifest;
  return toDesired(m, { file: 'm.yaml', line: 1, column: 1 }, [], HASH) as DesiredWebhook;
}

describe.each(WEBHOOK_FIELD_NAMES)('webhook field %s', (field) => {
  const rule: WebhookFieldRule = WEBHOOK_FIELDS[field];
  const [a, b] = values(rule);
  const withValue = (v: unknown) => ({ ...BASE, [field]: v });
  const manifestSpec = (v: unknown) => {
    const { name: _n, ...spec } = withValue(v);
    return spec;
  };
  const nameOf = (v: unknown) => (rule.from === 'metadata.name' ? String(v) : BASE.name);

  it('is read by the normaliser', () => {
    expect((toLiveWebhook({ id: 1, ...withValue(a) }) as unknown as Record<string, unknown>)[field]).toEqual(a);
    expect((toLiveWebhook({ id: 1, ...withValue(b) }) as unknown as Record<string, unknown>)[field]).toEqual(b);
  });

  it('is built into the desired body from the manifest', () => {
    expect((desired(manifestSpec(b), nameOf(b)).body as unknown as Record<string, unknown>)[field]).toEqual(b);
  });

  it('is compared by the diff (a change forces the replace)', () => {
    const d = desired(manifestSpec(b), nameOf(b));
    const same = toLiveWebhook({ id: 1, ...withValue(b) });
    expect(diffWebhook(d, same, undefined, false).changes).toEqual([]);
    const live = toLiveWebhook({ id: 1, ...withValue(a) });
    expect(diffWebhook(d, live, undefined, false).changes.map((c) => c.path)).toEqual([field]);
  });

  it('is fingerprinted by the saved-plan facts', () => {
    const one = webhookFields(toLiveWebhook({ id: 1, ...withValue(a) }), undefined);
    const two = webhookFields(toLiveWebhook({ id: 1, ...withValue(b) }), undefined);
    expect(Object.keys(one)).toContain(field);
    expect(one[field]).not.toEqual(two[field]);
  });
});

describe('a boolean field sent as a string', () => {
  it('"true" / "false" (any case, spaced) and 1 / 0 read as the booleans, as config booleans are; anything else as a webhook\'s absent false', () => {
    for (const [wire, want] of [['true', true], ['TRUE', true], [' True ', true], ['false', false], ['False', false], [1, true], ['1', true], [0, false], ['0', false], ['yes', false], [2, false], [null, false]] as const) {
      expect(toLiveWebhook({ id: 1, ...BASE, global: wire }).global, String(wire)).toBe(want);
    }
    const d = desired({ ...BASE, global: true }, 'hook');
    expect(diffWebhook(d, toLiveWebhook({ id: 1, ...BASE, global: 'true' }), undefined, false).changes).toEqual([]);
    const shape = { t: { fields: { v: { type: 'boolean', default: false } } } };
    expect(comparable(shape, 't', { v: 'True' })).toEqual(comparable(shape, 't', { v: true }));
    expect(comparable(shape, 't', { v: 'yes' })).toEqual({ v: 'yes' }); // not a boolean: compared as it is (a difference)
  });
});
