/** Builders for planner tests: desired resources via the real toDesired, live objects as the service shows them. */
import type { LiveIntegration, LiveWebhook } from '../../src/api/types.js';
import { withManualStep } from '../../src/reconcile/manual-step-token.js';
import { configShapes } from '../../src/manifests/shapes.js';
import type { IntegrationManifest, WebhookManifest } from '../../src/manifests/types.js';
import { toDesired } from '../../src/plan/desired.js';
import { withShapeDefaults } from '../../src/plan/shape.js';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredIntegration, DesiredResource, DesiredWebhook, Plan, PlanOptions } from '../../src/plan/types.js';
import { MASK } from '../../src/service/kinds.js';
import { MASKED_KEYS, type IntegrationType } from '../../src/kinds/registry.js';
import { hashingFor, newState } from '../../src/state/store.js';
import type { GovopsState, ManagedResource } from '../../src/state/types.js';

export const KEY = newState().fingerprintKey;
export const HASH = hashingFor(KEY);
export const SHAPES = configShapes();
const SRC = { file: 'm.yaml', line: 1, column: 1 };

export function integration(
  name: string,
  type: IntegrationType,
  config: Record<string, unknown>,
  extra: { autoBootstrap?: boolean; deleteCredentials?: Record<string, unknown>; annotations?: Record<string, string>; secretPaths?: string[] } = {},
): DesiredIntegration {
  const m: IntegrationManifest = {
    apiVersion: 'govops/v1',
    kind: 'Integration',
    metadata: { name, ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { type, autoBootstrap: extra.autoBootstrap ?? true, config, ...(extra.deleteCredentials ? { deleteCredentials: extra.deleteCredentials } : {}) },
  };
  return withManualStep(toDesired(m, SRC, extra.secretPaths ?? [], HASH), m) as DesiredIntegration;
}

export function webhook(name: string, spec: Partial<WebhookManifest['spec']> = {}, annotations?: Record<string, string>): DesiredWebhook {
  const m: WebhookManifest = {
    apiVersion: 'govops/v1',
    kind: 'Webhook',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { url: `https://hooks.example.com/${name}`, global: false, notificationType: ['modelCreated'], actionType: 'triggered', ...spec },
  };
  return toDesired(m, SRC, spec.secret ? ['spec.secret'] : [], HASH) as DesiredWebhook;
}

function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, MASKED_KEYS.has(k) && typeof v === 'string' ? MASK : mask(v)]));
  }
  return value;
}

/** What the service would list for this desired integration (defaults filled, credentials masked). */
export function liveOf(d: DesiredIntegration, id: string, status = 'enabled', overrides: Record<string, unknown> = {}): LiveIntegration {
  return {
    id,
    status,
    validationResults: { status: 'passed', validationTests: [] },
    type: d.body.type,
    autoBootstrap: d.body.autoBootstrap ?? false,
    config: mask({ ...withShapeDefaults(SHAPES, d.body.type, d.body.config), ...overrides }) as Record<string, unknown>,
  };
}

export function liveWebhookOf(d: DesiredWebhook, id: string): LiveWebhook {
  const { secret: _secret, ...rest } = d.body;
  return { id, ...rest, notificationType: [...rest.notificationType], createdBy: 1 };
}

export function owned(d: DesiredIntegration | DesiredWebhook, id: string, origin: 'created' | 'adopted' = 'created'): ManagedResource {
  const r: ManagedResource = {
    kind: d.kind,
    name: d.name,
    id,
    origin,
    specHash: d.specHash,
    secretFingerprints: { ...d.fingerprints },
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
  if (d.kind === 'Integration') {
    r.type = d.body.type;
    r.autoBootstrap = d.body.autoBootstrap ?? false;
  }
  return r;
}

export function stateWith(...resources: ManagedResource[]): GovopsState {
  return { version: 1, fingerprintKey: KEY, resources };
}

export const sqlConfig = (host = 'sql.example.com', password = 'pw-one'): Record<string, unknown> => ({
  host,
  database: 'govern',
  schema: 'views',
  username: 'svc',
  password,
});

/** A planner call over fixtures: lists default to empty, options to `defaults` (each test file picks its own). */
export const planner =
  (defaults: Pick<PlanOptions, 'prune' | 'allowReplace'> & Partial<PlanOptions>) =>
  (
    desired: DesiredResource[],
    live: { integrations?: LiveIntegration[]; webhooks?: LiveWebhook[] },
    state: GovopsState,
    options: Partial<PlanOptions> = {},
  ): Plan =>
    planChanges({
      desired,
      live: { integrations: live.integrations ?? [], webhooks: live.webhooks ?? [] },
      state,
      options: { ...defaults, ...options },
      shapes: SHAPES,
    });
