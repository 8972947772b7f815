/**
 * Turning wire bodies into the shapes of src/api/types.ts: ids become strings (the service sends
 * numbers in some bodies and strings in others), missing arrays become empty, statuses in the interface's case.
 */
import { createRequire } from 'node:module';
import { ApiError } from '../errors.js';
import type {
  IntegrationMutationResult,
  IntegrationStatus,
  LiveIntegration,
  LiveWebhook,
  ValidationResults,
  WebhookCreateResponse,
} from './types.js';
import { booleanFromWire } from '../util/boolean.js';
import { cutRedacted, redactThenCut } from '../util/cut.js';
import { isPlainObject } from '../util/object.js';
import { redactText } from '../util/redact.js';
import { spelledAs } from '../util/strings.js';
import { INTEGRATION_TYPES } from '../kinds/registry.js';
import { VALIDATION_TEST_STATUSES } from '../service/kinds.js';
import { WEBHOOK_FIELD_NAMES, readWebhookField, webhookFieldRule } from '../service/webhook-fields.js';


const INTEGRATION_STATUSES = ['enabled', 'creating', 'editing', 'deleting', 'createError', 'editError', 'deleteError'];
const STATUSES: readonly string[] = [...INTEGRATION_STATUSES, ...VALIDATION_TEST_STATUSES];
const STATUS_SET: ReadonlySet<string> = new Set(STATUSES);

/**
 * A status as the interface spells it, whatever the case on the wire (`ENABLED`, `Passed`, `createerror`: a service
 * that writes its enum constants' names); a status the interface does not list, or not a string, as `unknown` does.
 */
function statusOf(v: unknown): string {
  if (typeof v !== 'string') return 'unknown';
  return STATUS_SET.has(v) ? v : spelledAs(STATUSES, v);
}


/** An integration type as govops names it, whatever its case on the wire (`OBJECT_STORE`); an unknown one as it is. */
function typeOf(v: unknown): string {
  return spelledAs(INTEGRATION_TYPES, typeof v === 'string' ? v : String(v ?? ''));
}

/** An id as a string, whatever the wire said (number or string). */
export function idString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return v.toString();
  return '';
}

function validationResults(v: unknown): ValidationResults {
  if (!isPlainObject(v)) return { status: 'unknown', validationTests: [] };
  const tests = Array.isArray(v.validationTests) ? v.validationTests : [];
  return {
    status: statusOf(v.status),
    // A test already of the right shape is taken as it is (the parsed body is ours): a list of 10,000
    // integrations holds tens of thousands of them.
    validationTests: tests.filter(isPlainObject).map((t) =>
      typeof t.name === 'string' && typeof t.status === 'string' && STATUS_SET.has(t.status)
        ? (t as unknown as ValidationResults['validationTests'][number])
        : { ...t, name: String(t.name ?? ''), status: typeof t.status === 'string' ? statusOf(t.status) : String(t.status ?? 'unknown') },
    ),
  };
}

export function toMutationResult(v: unknown): IntegrationMutationResult {
  const o = isPlainObject(v) ? v : {};
  return {
    id: idString(o.id),
    status: statusOf(o.status),
    validationResults: validationResults(o.validationResults),
  };
}

export function toLiveIntegration(v: unknown): LiveIntegration {
  const o = isPlainObject(v) ? v : {};
  return {
    id: idString(o.id),
    status: statusOf(o.status),
    validationResults: validationResults(o.validationResults),
    // (any type the service names, one govops does not know included: callers check it with isIntegrationType)
    type: typeOf(o.type),
    autoBootstrap: booleanFromWire(o.autoBootstrap) === true,
    config: isPlainObject(o.config) ? o.config : {},
  };
}

export function toStatus(v: unknown): IntegrationStatus {
  const o = isPlainObject(v) ? v : {};
  return { id: idString(o.id), status: statusOf(o.status) };
}

export function toLiveWebhook(v: unknown): LiveWebhook {
  const o = isPlainObject(v) ? v : {};
  const fields: Record<string, unknown> = {};
  // The compared fields, from their one list (an optional one the answer leaves out stays absent).
  for (const f of WEBHOOK_FIELD_NAMES) {
    const rule = webhookFieldRule(f);
    if (rule.optional && !(f in o)) continue;
    fields[f] = readWebhookField(rule, o[f]);
  }
  const hook = {
    id: idString(o.id),
    ...fields,
    createdBy: typeof o.createdBy === 'number' ? o.createdBy : Number(o.createdBy ?? 0),
  } as LiveWebhook;
  if (typeof o.createdAt === 'string') hook.createdAt = o.createdAt;
  if (typeof o.updatedAt === 'string') hook.updatedAt = o.updatedAt;
  return hook;
}

/**
 * The answer of POST /webhooks: `{ createdWebhooks, errors }` (interface 4.3). A body holding neither list (empty,
 * `null`, another shape) is an error, never "nothing created": the client looks the batch up by name then.
 */
export function toWebhookCreateResponse(v: unknown, method = 'POST', path = '/webhooks'): WebhookCreateResponse {
  const o = isPlainObject(v) ? v : {};
  if (!Array.isArray(o.createdWebhooks) && !Array.isArray(o.errors)) {
    throw new ApiError(200, 'Invalid response', 'expected { createdWebhooks, errors } from the webhook create', method, path, v);
  }
  return {
    createdWebhooks: Array.isArray(o.createdWebhooks) ? o.createdWebhooks.map(toLiveWebhook) : [],
    errors: Array.isArray(o.errors) ? o.errors : [],
  };
}

export function toArray<T>(v: unknown, map: (item: unknown) => T, what: string, method: string, path: string): T[] {
  if (!Array.isArray(v)) {
    throw new ApiError(200, 'Invalid response', `expected an array of ${what}, got ${typeof v}`, method, path, v);
  }
  return v.map(map);
}

/**
 * The longest error text kept from a service's answer (characters): it is shown in outcomes, logs, /status and
 * notifications, and a service may send any length.
 */
export const MAX_ERROR_TEXT = 2000;
/** The longest part of an answer that is not JSON kept as the error's message (an HTML error page, say). */
export const MAX_ERROR_SNIPPET = 200;

/**
 * A service's error text, redacted, then cut to MAX_ERROR_TEXT: cut first, a secret the service echoed across the cut
 * would leave a part the redactor cannot recognise (src/util/cut.ts).
 */
function bounded(text: string): string {
  return redactThenCut(text, MAX_ERROR_TEXT, (left) => `… (${left} more characters)`);
}

const requireNode = createRequire(import.meta.url);

/**
 * HTTP's reason phrase for `status` (`Not Found`), from node:http, required only when an answer is an error: loading
 * node:http (and its server and client modules) is ~9 ms that a run whose answers all succeed never needs.
 */
function statusReason(status: number): string {
  const { STATUS_CODES } = requireNode('node:http') as typeof import('node:http');
  return STATUS_CODES[status] ?? 'Error';
}

/**
 * The ApiError for a non-2xx response, from the documented error body or sensible fallbacks. Its `error` and
 * `message` are redacted (they are cut); its `body` is the answer as parsed (redacted where it is output).
 */
export function apiErrorFrom(status: number, text: string, method: string, path: string): ApiError {
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  const reason = statusReason(status);
  if (isPlainObject(body)) {
    const error = typeof body.error === 'string' && body.error !== '' ? body.error : reason;
    const message =
      typeof body.message === 'string' && body.message !== ''
        ? body.message
        : Array.isArray(body.message)
          ? body.message.map(String).join('; ')
          : `HTTP ${status} ${reason}`;
    return new ApiError(status, bounded(error), bounded(message), method, path, body);
  }
  const snippet = cutRedacted(redactText(text).trim(), MAX_ERROR_SNIPPET);
  return new ApiError(status, reason, snippet === '' ? `HTTP ${status} ${reason}` : snippet, method, path, body);
}

/** Script endpoints answer text/plain or a JSON string (or an object holding `script`). */
export function scriptText(contentType: string | undefined, text: string): string {
  if (contentType && /json/i.test(contentType)) {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'string') return parsed;
    if (isPlainObject(parsed) && typeof parsed.script === 'string') return parsed.script;
    return JSON.stringify(parsed, null, 2);
  }
  return text;
}
