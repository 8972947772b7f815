/**
 * Checks across the whole manifest set: duplicate (kind, name), two webhooks of one name in the service (spec.name,
 * else metadata.name), and integrations the service would 409.
 */
import { kindOf, naturalKey, uniqueLookalikeKey, uniqueValueKey } from '../kinds/registry.js';
import { DELETE_ANNOTATION, annotationOn } from '../service/annotations.js';
import { webhookServiceName } from '../service/webhook-fields.js';
import type { Diagnostic, IntegrationManifest, LoadedManifest, WebhookManifest } from './types.js';
import { where } from './format.js';


/** Returns the manifests to keep (first of each duplicate) and one error per later duplicate, naming both places. */
export function checkDuplicates(manifests: readonly LoadedManifest[]): { kept: LoadedManifest[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const kept: LoadedManifest[] = [];
  const byName = new Map<string, LoadedManifest>();
  const byNaturalKey = new Map<string, LoadedManifest>();
  const byUniqueField = new Map<string, LoadedManifest>();
  const byWebhookName = new Map<string, LoadedManifest>();
  for (const m of manifests) {
    const { kind, metadata } = m.manifest;
    const key = `${kind}/${metadata.name}`;
    const first = byName.get(key);
    if (first) {
      diagnostics.push({
        ...m.locate(['metadata', 'name']),
        kind,
        name: metadata.name,
        severity: 'error',
        message: `duplicate name: ${key} is also defined at ${where(first)} (names are unique per kind)`,
      });
      continue;
    }
    if (kind === 'Webhook') {
      const clash = webhookNameClash(m, byWebhookName);
      if (clash) {
        diagnostics.push(clash);
        continue;
      }
    }
    byName.set(key, m);
    kept.push(m);
    if (kind !== 'Integration') continue;
    const spec = (m.manifest as IntegrationManifest).spec;
    // What the service keeps unique: the natural key, and the kind's unique fields (interface 8), compared as written
    // (`uniqueValueKey`; two values that may be one to the service, `uniqueLookalikeKey`, are warned of). A field that
    // is a secret reference or missing is not known offline: not compared.
    const nk = naturalKey(spec.type, spec.config);
    const nkKnown = !/=($|:)/.test(nk);
    const kindDef = kindOf(spec.type);
    // the first clash, worked out only when there is one: `validate` of 10,000 has none
    let clash: { other: LoadedManifest; path: readonly string[]; message(other: string): string } | undefined;
    const byNk = nkKnown ? byNaturalKey.get(nk) : undefined;
    if (byNk) clash = { other: byNk, path: kindDef.identityField, message: (other) => `same ${spec.type} integration as ${other} (${nk}): the service allows only one` };
    const uniqueKeys: string[] = [];
    // A manifest marked govops/delete gives its unique values up: another manifest may take them, and the plan
    // orders that create after the delete (`freedBy`), or blocks it (`value-taken`) when the delete is not done.
    // Its natural key stays its own: the plan matches both manifests by it.
    const leaving = annotationOn(m.manifest.metadata.annotations, DELETE_ANNOTATION);
    for (const field of leaving ? [] : (kindDef.uniqueFields ?? [])) {
      const value = spec.config?.[field];
      if (typeof value !== 'string') continue;
      const key = uniqueValueKey(spec.type, field, value);
      const other = byUniqueField.get(key);
      if (other && !clash) {
        clash = {
          other,
          path: ['spec', 'config', field],
          message: (o) => `${field} \`${value}\` is also used by ${o}: it is unique across ${spec.type} integrations (the service refuses a second one)`,
        };
      }
      uniqueKeys.push(key);
    }
    if (clash) {
      const { other } = clash;
      diagnostics.push({
        ...m.locate([...clash.path]),
        kind,
        name: metadata.name,
        severity: 'error',
        message: clash.message(`${other.manifest.kind}/${other.manifest.metadata.name} at ${where(other)}`),
      });
      kept.pop();
      continue;
    }
    if (nkKnown) byNaturalKey.set(nk, m);
    for (const key of uniqueKeys) byUniqueField.set(key, m);
  }
  return { kept, diagnostics: [...diagnostics, ...lookalikeWarnings(kept)] };
}

/**
 * Unique values written otherwise than one before them that the service may hold to be the same (`uniqueLookalikeKey`:
 * two object_store paths that differ only by trailing slashes): warnings (compared as written, the two are no clash).
 * A manifest marked govops/delete gives its values up, as above.
 */
function lookalikeWarnings(kept: readonly LoadedManifest[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const first = new Map<string, { m: LoadedManifest; value: string }>();
  for (const m of kept) {
    if (m.manifest.kind !== 'Integration' || annotationOn(m.manifest.metadata.annotations, DELETE_ANNOTATION)) continue;
    const spec = (m.manifest as IntegrationManifest).spec;
    for (const field of kindOf(spec.type).uniqueFields ?? []) {
      const value = spec.config?.[field];
      const key = typeof value === 'string' ? uniqueLookalikeKey(spec.type, field, value) : undefined;
      if (key === undefined || typeof value !== 'string') continue;
      const like = first.get(key);
      if (!like) first.set(key, { m, value });
      else if (like.value !== value) {
        out.push({
          ...m.locate(['spec', 'config', field]),
          kind: m.manifest.kind,
          name: m.manifest.metadata.name,
          severity: 'warning',
          message:
            `${field} \`${value}\` and \`${like.value}\` of ${like.m.manifest.kind}/${like.m.manifest.metadata.name} at ${where(like.m)} ` +
            `differ only by trailing slashes: govops reads them as one location, and the service may too (it refuses a second ` +
            `integration on one ${field}); write one location once`,
        });
      }
    }
  }
  return out;
}

/** A second webhook manifest of one name in the service (spec.name, else metadata.name): its error; else it is noted. */
function webhookNameClash(m: LoadedManifest, byWebhookName: Map<string, LoadedManifest>): Diagnostic | undefined {
  const webhook = m.manifest as WebhookManifest;
  const serviceName = webhookServiceName(webhook);
  const other = byWebhookName.get(serviceName);
  if (!other) {
    byWebhookName.set(serviceName, m);
    return undefined;
  }
  return {
    ...m.locate(typeof webhook.spec.name === 'string' ? ['spec', 'name'] : ['metadata', 'name']),
    kind: 'Webhook',
    name: webhook.metadata.name,
    severity: 'error',
    message: `duplicate webhook name: ${JSON.stringify(serviceName)} is also the name in the service of Webhook/${other.manifest.metadata.name} at ${where(other)} (a webhook's name, spec.name or else metadata.name, is its identity)`,
  };
}
