/** Request-body checks shared by the integration routes (400s with readable messages), from the interface tables. */
import { INTEGRATION_TYPES, MANUAL_ONLY, isIntegrationType, type IntegrationType } from '../../kinds/registry.js';
import { HttpError, type SandboxRequest } from '../http.js';
import { checkFields, fillDefaults, formatFieldIssues, type FieldIssue } from './fields.js';
import { CONFIG, DELETE_PAYLOAD, type Obj } from './interface.js';
import { maskedValuePaths } from './view.js';
import { isPlainObject } from '../../util/object.js';
import { withArticle } from '../../util/strings.js';

export interface ParsedBody {
  type: IntegrationType;
  autoBootstrap: boolean;
  /** With defaults filled in (what the service works with). */
  config: Record<string, unknown>;
  /** The known config fields as the caller sent them (unknown fields are dropped). */
  sent: Record<string, unknown>;
}

export function isEmptyBody(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    (typeof body === 'object' && !Array.isArray(body) && Object.keys(body as object).length === 0)
  );
}

/** The effective config of a kind: the fields sent with every default filled in. */
export function effectiveConfig(type: IntegrationType, sent: Obj): Obj {
  return type === 'distributed_sql' ? structuredClone(sent) : fillDefaults(CONFIG[type], sent);
}

/**
 * Validate `{type, autoBootstrap, config}` as the service does (interface 4.1 and the tables of part 2);
 * returns it with defaults filled in. distributed_sql is created "with only `type`", and `autoBootstrap` /
 * `config` are required "for every kind except distributed_sql": not required is not forbidden, so it also
 * takes `autoBootstrap: false` and an empty `config`.
 */
export function parseIntegrationBody(body: unknown, masks?: readonly string[]): ParsedBody {
  if (!isPlainObject(body)) throw new HttpError(400, 'The request body must be an object with type, autoBootstrap and config');
  const type = body.type;
  if (!isIntegrationType(type)) {
    throw new HttpError(400, `Invalid integration: type must be one of ${INTEGRATION_TYPES.join(', ')}`);
  }
  const issues: FieldIssue[] = [];
  if (type === 'distributed_sql') {
    if (body.autoBootstrap !== undefined && body.autoBootstrap !== false) issues.push({ path: 'autoBootstrap', message: 'is not taken by a distributed_sql integration (created with only type)' });
    if (body.config !== undefined && !isEmptyBody(body.config)) issues.push({ path: 'config', message: 'is not taken by a distributed_sql integration (created with only type)' });
    if (issues.length) throw new HttpError(400, `Invalid integration: ${formatFieldIssues(issues)}`);
    return { type, autoBootstrap: false, config: {}, sent: {} };
  }
  if (body.autoBootstrap === undefined) issues.push({ path: 'autoBootstrap', message: 'is required' });
  else if (typeof body.autoBootstrap !== 'boolean') issues.push({ path: 'autoBootstrap', message: 'must be a boolean' });
  if (body.config === undefined) issues.push({ path: 'config', message: 'is required' });
  else if (!isPlainObject(body.config)) issues.push({ path: 'config', message: 'must be an object' });
  if (issues.length) throw new HttpError(400, `Invalid integration: ${formatFieldIssues(issues)}`);
  const autoBootstrap = body.autoBootstrap as boolean;
  const sent = checkFields(CONFIG[type], body.config as Obj, autoBootstrap, 'config', issues);
  if (issues.length) throw new HttpError(400, `Invalid integration: ${formatFieldIssues(issues)}`);
  if (autoBootstrap && MANUAL_ONLY.has(type)) {
    throw new HttpError(400, `autoBootstrap must be false for ${type} integrations`);
  }
  if (type === 'cloud_warehouse' && sent.authenticationType === 'oAuth' && autoBootstrap) {
    throw new HttpError(400, 'config.oAuthClientConfig requires autoBootstrap false (authenticationType oAuth)');
  }
  const masked = maskedValuePaths(sent, 'config', masks);
  if (masked.length) {
    throw new HttpError(400, `Credential fields hold the mask instead of a value: ${masked.join(', ')}; send the real credentials`);
  }
  return { type, autoBootstrap, config: effectiveConfig(type, sent), sent };
}

/** Problems of a 2.9 delete payload for the kind, as one message ('' when it is valid). */
export function deletePayloadProblems(type: IntegrationType, payload: unknown): string {
  const table = DELETE_PAYLOAD[type];
  if (!table) return `${withArticle(type)} integration is deleted without a payload`;
  if (!isPlainObject(payload)) return 'the delete payload must be an object';
  const issues: FieldIssue[] = [];
  checkFields(table, payload, true, 'body', issues);
  return formatFieldIssues(issues);
}

export function parseId(req: SandboxRequest): number {
  const raw = req.params.id ?? '';
  const id = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id)) throw new HttpError(404, `Integration ${raw} not found`);
  return id;
}

export function isDryRun(req: SandboxRequest): boolean {
  const v = req.query.get('dryRun')?.toLowerCase() ?? null;
  if (v === null || v === 'false') return false;
  if (v === 'true' || v === '') return true;
  throw new HttpError(400, `Query parameter dryRun must be true or false, got "${v}"`);
}
