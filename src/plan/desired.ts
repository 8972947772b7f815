/**
 * From a resolved manifest (secrets already substituted) to a DesiredResource for the planner:
 * the API body, its secret paths and their keyed fingerprints, and the spec hash.
 * Pure and deterministic: the hashing (keyed fingerprints, the spec digest) is injected by the caller
 * (`hashingFor` of src/state/store.ts), so this module imports no crypto.
 */
import type { DataSourceManifest, IntegrationManifest, Manifest, SourceLocation, WebhookManifest } from '../manifests/types.js';
import { DELETE_ANNOTATION, IGNORE_FIELDS_ANNOTATION, SUSPEND_ANNOTATION, annotationOn, ignoreFieldProblem, splitIgnoreFields } from '../service/annotations.js';
import { ignoreFieldFacts, isConfigless, isSensitiveKey } from '../kinds/registry.js';
import { WEBHOOK_FIELD_NAMES, webhookFieldRule, webhookServiceName } from '../service/webhook-fields.js';
import { copyPlain } from '../util/copy.js';
import { canonicalJson } from './diff.js';
import { isPlainObject } from '../util/object.js';
import {
  type DesiredDataSourceBody,
  type DesiredIntegrationBody,
  type DesiredResource,
  type DesiredWebhookBody,
  type Hashing,
} from './types.js';

/** Dotted body paths of every leaf under `value` whose key is sensitive. */
function sensitiveLeaves(prefix: string, value: unknown, out: Set<string>): void {
  if (!isPlainObject(value)) return;
  for (const k of Object.keys(value)) {
    const v = value[k];
    if (isSensitiveKey(k) && v !== undefined && !isPlainObject(v)) out.add(`${prefix}.${k}`);
    else if (isPlainObject(v)) sensitiveLeaves(`${prefix}.${k}`, v, out);
  }
}

/** The object holding the value at a dotted path and the value's key; undefined when a step is not an object. */
function holderOf(root: unknown, path: string): { holder: Record<string, unknown>; key: string } | undefined {
  const parts = path.split('.');
  let cur = root;
  for (let i = 0; i < parts.length - 1; i++) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[parts[i]!];
  }
  return isPlainObject(cur) ? { holder: cur, key: parts[parts.length - 1]! } : undefined;
}

const asSecretString = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/**
 * The path a secret is kept at: a secret inside a list (`config.userRolePattern.exclude.0`) makes the list a secret
 * as a whole (`config.userRolePattern.exclude`), fingerprinted and compared as one, as the diff shows a list holding a
 * credential. Its element has no holder object: its fingerprint was dropped, the spec hash stored in the state was a
 * plain digest of the value, and plan showed the list by value.
 */
function secretHolderPath(body: unknown, path: string): string {
  const parts = path.split('.');
  let cur = body;
  for (let i = 0; i < parts.length - 1; i++) {
    if (!isPlainObject(cur)) return path;
    cur = cur[parts[i]!];
    if (Array.isArray(cur)) return parts.slice(0, i + 1).join('.');
  }
  return path;
}

/** Each desired resource's spec hash once worked out, before that the hashing it is worked out with. */
const specHashes = new WeakMap<object, string | Hashing>();

/**
 * The spec hash: the canonical JSON of kind and body, each secret written as its fingerprint (substituted while
 * writing, the body neither changed nor copied for it), digested. Worked out once per resource.
 */
function specHashOf(d: DesiredResource): string {
  const known = specHashes.get(d);
  if (typeof known === 'string') return known;
  if (!known) throw new Error('spec hash of an object toDesired did not make');
  const subs = new Map<object, Map<string, unknown>>();
  for (const p of d.secretPaths) {
    const at = holderOf(d.body, p)!;
    const inHolder = subs.get(at.holder);
    const value = `fingerprint:${d.fingerprints[p]}`;
    if (inHolder) inHolder.set(at.key, value);
    else subs.set(at.holder, new Map([[at.key, value]]));
  }
  const hash = known.digest(canonicalJson({ kind: d.kind, body: d.body }, subs));
  specHashes.set(d, hash);
  return hash;
}

const SPEC_HASH: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: DesiredResource) {
    return specHashOf(this);
  },
};

/**
 * @param manifest the manifest with secret references replaced by their values
 * @param secretPaths paths of secret values as `resolveSecrets` reports them (`spec.config.password`)
 * @param hashing keyed fingerprints (the state's key) and the spec digest
 * @param owned the caller hands `manifest` over (a private copy it no longer uses, as `resolveSecrets` makes):
 *   the body takes its objects instead of copying them again. Otherwise nothing of `manifest` is shared.
 */
export function toDesired(
  manifest: Manifest,
  source: SourceLocation,
  secretPaths: readonly string[],
  hashing: Hashing,
  owned = false,
): DesiredResource {
  const annotations = manifest.metadata.annotations;
  const deleteRequested = annotationOn(annotations, DELETE_ANNOTATION);
  const suspended = annotationOn(annotations, SUSPEND_ANNOTATION);
  // Validation refuses a path that may not be ignored (identity, destination, credential); never honoured here either.
  const type = manifest.kind === 'Integration' ? manifest.spec.type : undefined;
  const ignoreFields = splitIgnoreFields(annotations?.[IGNORE_FIELDS_ANNOTATION]).filter((p) => ignoreFieldProblem(manifest.kind, p, ignoreFieldFacts(type)) === undefined);
  const src = { file: source.file, line: source.line, column: source.column };
  const body = manifest.kind === 'Integration' ? integrationBody(manifest, owned) : manifest.kind === 'Webhook' ? webhookBody(manifest) : dataSourceBody(manifest);
  const paths = new Set<string>();
  for (const p of secretPaths) {
    const rel = p.startsWith('spec.') ? p.slice(5) : p;
    if (rel.startsWith('config.') || rel === 'secret') paths.add(secretHolderPath(body, rel));
  }
  sensitiveLeaves('config', (body as { config?: unknown }).config, paths);
  const fingerprints: Record<string, string> = {};
  const kept: string[] = [];
  for (const p of [...paths].sort()) {
    const at = holderOf(body, p);
    const v = at?.holder[at.key];
    if (at === undefined || v === undefined) continue;
    kept.push(p);
    fingerprints[p] = hashing.fingerprint(asSecretString(v));
  }
  // Built in one object (same properties, same order as ever), not spread from a base object. The spec hash is
  // worked out when first read (the ledger's record, stale checks of old entries, preview ownership): a plan in
  // sync reads none of 10,000. It is an own enumerable property (a spread or JSON copies it) through one getter
  // shared by every desired resource, so the objects keep a shared shape (a getter per object made each one a
  // dictionary, ~1.5 KB a resource at 10,000: issue #26); the hashing is kept beside the object until then.
  const d = { name: manifest.metadata.name, source: src, secretPaths: kept, fingerprints } as DesiredResource;
  specHashes.set(d, hashing);
  Object.defineProperty(d, 'specHash', SPEC_HASH);
  d.deleteRequested = deleteRequested;
  if (suspended) d.suspended = suspended;
  if (ignoreFields.length) d.ignoreFields = ignoreFields;
  d.kind = manifest.kind;
  if (manifest.kind === 'Integration' && d.kind === 'Integration') {
    d.body = body as DesiredIntegrationBody;
    const creds = manifest.spec.deleteCredentials;
    if (creds) d.deleteCredentials = owned ? creds : copyPlain(creds);
  } else if (d.kind === 'DataSource') d.body = body as DesiredDataSourceBody;
  else if (d.kind === 'Webhook') d.body = body as DesiredWebhookBody;
  return d;
}

function dataSourceBody(m: DataSourceManifest): DesiredDataSourceBody {
  const { integration, dataSourceName, prefix } = m.spec;
  return { integration, dataSourceName, prefix };
}

function integrationBody(m: IntegrationManifest, owned: boolean): DesiredIntegrationBody {
  const { type, autoBootstrap, config } = m.spec;
  if (isConfigless(type)) return { type };
  const body: DesiredIntegrationBody = { type };
  body.autoBootstrap = autoBootstrap ?? false;
  body.config = owned && config ? config : copyPlain(config ?? {});
  return body;
}

function webhookBody(m: WebhookManifest): DesiredWebhookBody {
  const s = m.spec as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  // Every compared field, from its one list (service/webhook-fields.ts); the secret is sent, never compared.
  for (const f of WEBHOOK_FIELD_NAMES) body[f] = webhookFieldRule(f).from === 'metadata.name' ? webhookServiceName(m) : copyPlain(s[f]);
  if (typeof s.secret === 'string') body.secret = s.secret;
  return body as unknown as DesiredWebhookBody;
}
