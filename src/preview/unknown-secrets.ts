/**
 * Planning with secrets that cannot be resolved (CI usually has no production secrets), pure.
 *
 * An unresolved reference becomes an *unknown* value that never counts as a change: before planning,
 * its desired value is made equal to what the planner will compare it with — the live value when the
 * service shows it in clear, and the fingerprint recorded in govops state when the service masks it.
 * So the real planner runs unchanged and reports exactly the changes that do not depend on the secret.
 * Where nothing is known (a resource not in state), the planner sees a placeholder: the same result it
 * would give for any value (create, or an adopted secret it cannot compare).
 */
import type { LiveIntegration, LiveWebhook } from '../api/types.js';
import { describeRef, isSecretRef, type ResolvedSecrets } from '../manifests/secrets.js';
import type { LoadedManifest, Manifest } from '../manifests/types.js';
import { withManualStep } from '../reconcile/manual-step-token.js';
import { toDesired } from '../plan/desired.js';
import type { DesiredResource } from '../plan/types.js';
import { looksMasked } from '../service/kinds.js';
import { hashingFor } from '../state/store.js';
import type { GovopsState, ManagedResource } from '../state/types.js';
import { firstBy } from '../util/multimap.js';

export interface UnknownSecret {
  resourceKind: 'Integration' | 'Webhook' | 'DataSource';
  name: string;
  /** Path relative to `spec`, as in the plan and state (`config.password`, `secret`, `deleteCredentials.password`). */
  path: string;
  /** The reference that could not be resolved, e.g. `fromEnv: DB_PASSWORD` (a name, never a value). */
  ref: string;
}

/** Stands in for a secret the preview cannot read. Only ever compared as a secret (never shown). */
export const UNKNOWN_SECRET = '(unknown: secret not available to the preview)';

function valueAt(root: unknown, dotted: string): unknown {
  let cur = root;
  for (const part of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setAt(root: unknown, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let cur = root;
  for (const part of parts.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur !== null && typeof cur === 'object') (cur as Record<string, unknown>)[parts[parts.length - 1]!] = value;
}

/** The references of a resolved manifest that are still references (resolution failed), by `spec.` path. */
export function unresolvedRefs(r: ResolvedSecrets): Array<{ specPath: string; ref: string }> {
  const out: Array<{ specPath: string; ref: string }> = [];
  for (const p of r.secretPaths) {
    const v = valueAt(r.manifest, p);
    if (isSecretRef(v)) out.push({ specPath: p, ref: describeRef(v) });
  }
  return out;
}

export interface LiveResources {
  integrations: LiveIntegration[];
  webhooks: LiveWebhook[];
}

/**
 * Desired resources for the planner, with every unresolved reference turned into an unknown value
 * (see the file comment), and the list of those unknowns.
 */
export function desiredWithUnknowns(
  loaded: readonly LoadedManifest[],
  resolved: readonly ResolvedSecrets[],
  state: GovopsState,
  live: LiveResources,
): { desired: DesiredResource[]; unknown: UnknownSecret[] } {
  const unknown: UnknownSecret[] = [];
  const hashing = hashingFor(state.fingerprintKey);
  // The state entry of each resource and the live item of each id, as a scan finds them: made once, when a manifest
  // first needs them (a preview without the secrets needs them for every manifest with a reference)
  let index: { state: Map<string, ManagedResource>; integrations: Map<string, unknown>; webhooks: Map<string, unknown> } | undefined;
  const lookups = () =>
    (index ??= {
      state: firstBy(state.resources, (s) => `${s.kind}/${s.name}`),
      integrations: firstBy(live.integrations, (l) => l.id),
      webhooks: firstBy(live.webhooks, (l) => l.id),
    });
  const desired = resolved.map((r, i) => {
    const refs = unresolvedRefs(r);
    if (refs.length === 0) return withManualStep(toDesired(r.manifest, loaded[i]!.source, r.secretPaths, hashing), loaded[i]!.manifest);
    const manifest = structuredClone(r.manifest) as Manifest;
    const kind = manifest.kind;
    const name = manifest.metadata.name;
    const st = lookups().state.get(`${kind}/${name}`);
    const liveObj: unknown = st ? (kind === 'Integration' ? lookups().integrations.get(st.id) : lookups().webhooks.get(st.id)) : undefined;
    for (const { specPath, ref } of refs) {
      const rel = specPath.slice('spec.'.length);
      unknown.push({ resourceKind: kind, name, path: rel, ref });
      const shown = rel.startsWith('config.') ? valueAt(liveObj, rel) : undefined;
      setAt(manifest, specPath, typeof shown === 'string' && !looksMasked(shown) ? shown : UNKNOWN_SECRET);
    }
    const d = toDesired(manifest, loaded[i]!.source, r.secretPaths, hashing);
    for (const { specPath } of refs) {
      const rel = specPath.slice('spec.'.length);
      const recorded = st?.secretFingerprints[rel];
      if (recorded !== undefined && rel in d.fingerprints) d.fingerprints[rel] = recorded;
    }
    return withManualStep(d, loaded[i]!.manifest);
  });
  return { desired, unknown };
}
