/** Request-body checks shared by the integration routes (400s with readable messages). */
// eslint-disable-next-line @typescript-eslint/no-restricted-imports -- TODO(#8): inject, the layer rule forbids it
import { validateIntegrationBody, withDefaults } from '../../manifests/schemas.js';
import { MANUAL_ONLY, type IntegrationType } from '../../service/kinds.js';
import { HttpError, type SandboxRequest } from '../http.js';
import { maskedValuePaths } from './view.js';

export interface ParsedBody {
  type: IntegrationType;
  autoBootstrap: boolean;
  /** With defaults filled in. */
  config: Record<string, unknown>;
}

export function formatIssues(issues: Array<{ path: (string | number)[]; message: string }>): string {
  return issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

export function isEmptyBody(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    (typeof body === 'object' && !Array.isArray(body) && Object.keys(body as object).length === 0)
  );
}

/**
 * distributed_sql is created "with only `type`" and `autoBootstrap`/`config` are required "for every kind
 * except distributed_sql" (interface 4.1): not required is not forbidden, so on the wire the sandbox also
 * takes `autoBootstrap: false` and an empty `config` for it (the manifests schema, stricter, refuses them).
 */
function wireLenient(body: Record<string, unknown>): Record<string, unknown> {
  if (body.type !== 'distributed_sql') return body;
  const out = { ...body };
  if (out.autoBootstrap === false) delete out.autoBootstrap;
  if (isEmptyBody(out.config) && out.config !== null) delete out.config;
  return out;
}

/** Validate `{type, autoBootstrap, config}` as the service does; returns it with defaults filled in. */
export function parseIntegrationBody(body: unknown): ParsedBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'The request body must be an object with type, autoBootstrap and config');
  }
  const issues = validateIntegrationBody(wireLenient(body as Record<string, unknown>));
  if (issues.length) throw new HttpError(400, `Invalid integration: ${formatIssues(issues)}`);
  const b = wireLenient(body as Record<string, unknown>) as { type: IntegrationType; autoBootstrap?: boolean; config?: Record<string, unknown> };
  const autoBootstrap = b.autoBootstrap ?? false;
  if (autoBootstrap && MANUAL_ONLY.has(b.type)) {
    throw new HttpError(400, `autoBootstrap must be false for ${b.type} integrations`);
  }
  const masked = maskedValuePaths(b.config ?? {});
  if (masked.length) {
    throw new HttpError(400, `Credential fields hold the mask instead of a value: ${masked.join(', ')}; send the real credentials`);
  }
  return { type: b.type, autoBootstrap, config: withDefaults(b.type, b.config ?? {}) };
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
