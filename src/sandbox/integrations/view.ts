/** Wire views of a stored integration: masked config, string ids (number only in the status body). */
import type { IntegrationMutationResult, ValidationResults } from '../../api/types.js';
import { MASK, MASKED_KEYS, type IntegrationType } from '../../service/kinds.js';

export interface StoredIntegration {
  id: number;
  type: IntegrationType;
  autoBootstrap: boolean;
  /** As the service stores it: defaults filled in, credentials in clear. */
  config: Record<string, unknown>;
  status: string;
  validationResults: ValidationResults;
  createdAt: string;
  updatedAt: string;
  /** Epoch ms at which the current transition (creating/editing/deleting) completes. */
  pendingUntil?: number;
  /** Whether the current transition ends in createError/editError/deleteError. */
  pendingFail?: boolean;
  /** Whether the current transition started from an error status (its success emits healthCheckResolved). */
  pendingFromError?: boolean;
  /** Who started the current transition (for event metadata). */
  pendingActor?: { userId: number; userName: string };
}

/** Deep copy with every credential key (at any depth) replaced by the mask. */
export function maskConfig(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(maskConfig);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = MASKED_KEYS.has(k) && v !== null && v !== undefined && typeof v !== 'object' ? MASK : maskConfig(v);
  }
  return out;
}

/** Paths of credential keys whose value is the mask itself (a client echoing a GET back). */
export function maskedValuePaths(value: unknown, prefix = 'config'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => maskedValuePaths(v, `${prefix}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) =>
    MASKED_KEYS.has(k) && v === MASK ? [`${prefix}.${k}`] : maskedValuePaths(v, `${prefix}.${k}`),
  );
}

export function mutationView(i: StoredIntegration): IntegrationMutationResult {
  return { id: String(i.id), status: i.status, validationResults: i.validationResults };
}

export function fullView(i: StoredIntegration): Record<string, unknown> {
  return {
    id: String(i.id),
    status: i.status,
    validationResults: i.validationResults,
    type: i.type,
    autoBootstrap: i.autoBootstrap,
    config: maskConfig(i.config),
  };
}
