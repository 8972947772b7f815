/**
 * The compared fields of a webhook, in one list (issue 23): the normaliser (api/normalize.ts), the diff
 * (plan/webhooks.ts), the saved-plan facts (plan/facts.ts) and the desired builder (plan/desired.ts) all walk
 * it, so a field added here is read, built, compared and fingerprinted everywhere, and missed nowhere.
 * The secret is not one of them: it is write-only in the service and compared by fingerprint only.
 */
import { booleanFromWire } from '../util/boolean.js';
import { spelledAs } from '../util/strings.js';
import { WEBHOOK_ACTIONS } from './events.js';
import { urlAsCompared } from './kinds.js';

export interface WebhookFieldRule {
  /** The JSON type of the value (the normaliser reads the wire value as it). */
  type: 'string' | 'boolean' | 'string[]';
  /** A set: order and repeats mean nothing. */
  set?: true;
  /**
   * A service may leave it out (or send null): the live value is then kept as null and not compared
   * (the interface does not list it in every answer).
   */
  optional?: true;
  /**
   * The values the interface names (a string, or each item of a list): one sent in another case (`TRIGGERED`,
   * `MODELCREATED`, as a service writing its enum constants' names does) is read as the value it matches.
   */
  values?: readonly string[];
  /** `url`: compared as `urlAsCompared` (service/kinds.ts): scheme and host case-insensitively, `https://h` = `https://h/`. */
  compare?: 'url';
  /**
   * Where the manifest gives it: its own field under `spec` (default), or `metadata.name`: the name, which is
   * `spec.name` when written, else `metadata.name` (`webhookServiceName`).
   */
  from?: 'metadata.name';
}

export const WEBHOOK_FIELDS = {
  name: { type: 'string', from: 'metadata.name' },
  url: { type: 'string', compare: 'url' },
  global: { type: 'boolean' },
  notificationType: { type: 'string[]', set: true, values: WEBHOOK_ACTIONS },
  actionType: { type: 'string', optional: true, values: ['triggered', 'receive'] },
} as const satisfies Record<string, WebhookFieldRule>;

export type WebhookField = keyof typeof WEBHOOK_FIELDS;

export const WEBHOOK_FIELD_NAMES = Object.keys(WEBHOOK_FIELDS) as WebhookField[];

export function webhookFieldRule(field: WebhookField): WebhookFieldRule {
  return WEBHOOK_FIELDS[field];
}

/**
 * A webhook manifest's name in the service: `spec.name` when written (any non-empty string the service allows,
 * such as `Slack Alerts`), else `metadata.name`. Everything that matches, sends or records a webhook's service name
 * uses this, never `metadata.name` directly.
 */
export function webhookServiceName(m: { metadata: { name: string }; spec: { name?: string | undefined } }): string {
  return typeof m.spec.name === 'string' ? m.spec.name : m.metadata.name;
}

/** A set as compared: distinct and sorted. */
export function asSet(xs: unknown): string[] {
  return [...new Set(Array.isArray(xs) ? xs.map(String) : [])].sort();
}

/** A value in the interface's spelling when it names one of `values` in another case; else as it is. */
function cased(values: readonly string[] | undefined, v: string): string {
  return !values || values.includes(v) ? v : spelledAs(values, v);
}

/** The wire value as govops keeps it (missing: '' / false / [], or null for an optional field). */
export function readWebhookField(rule: WebhookFieldRule, raw: unknown): unknown {
  if (rule.optional && (raw === undefined || raw === null)) return null;
  switch (rule.type) {
    case 'string':
      return cased(rule.values, String(raw ?? ''));
    case 'boolean':
      // (`"true"` / `"false"` as config booleans are: util/boolean.ts)
      return booleanFromWire(raw) === true;
    case 'string[]':
      return Array.isArray(raw) ? raw.map((x) => cased(rule.values, String(x))) : [];
  }
}

/** The value as compared (a set sorted and without repeats; an absent optional value as null). */
export function comparableWebhookField(rule: WebhookFieldRule, value: unknown): unknown {
  if (rule.set) return asSet(value);
  if (rule.compare === 'url' && typeof value === 'string') return urlAsCompared(value);
  return value ?? null;
}
