/**
 * What a pull request changes, resource by resource (pure): the manifests at the merge-base against the
 * manifests at the head. A resource is identified by its kind and metadata.name; an Integration whose name
 * changed but whose identity in the service (its natural key: kind and host, workspace, name...) did not is
 * *renamed*; so is a DataSource whose integration and prefix (its identity) stayed, and a Webhook whose name in the
 * service (its identity: spec.name, else metadata.name) stayed. Without spec.name a webhook's metadata.name is its
 * name in the service, so renaming one is a removal plus an addition.
 * Resources the pull request does not touch are not listed.
 */
import type { DataSourceManifest, IntegrationManifest, LoadedManifest, WebhookManifest } from '../manifests/types.js';
import { webhookServiceName } from '../service/webhook-fields.js';
import { naturalKey } from '../kinds/registry.js';
import { diffManifest, manifestFields, type ManifestFieldChange } from './manifest-diff.js';

export type PrChangeKind = 'added' | 'removed' | 'renamed' | 'changed';

export interface SourceRef {
  file: string;
  line: number;
  column: number;
}

export interface PrChange {
  resourceKind: 'Integration' | 'Webhook' | 'DataSource';
  /** metadata.name at the head (at the base for a removal). */
  name: string;
  change: PrChangeKind;
  /** The name at the base, for a rename. */
  renamedFrom?: string;
  integrationType?: string;
  /** Where the manifest is at the head (at the base for a removal). */
  source: SourceRef;
  /** Where it was at the base (changed, renamed). */
  baseSource?: SourceRef;
  /** Field changes (changed, renamed; every field for an addition); secret values never, references by name. */
  fields: ManifestFieldChange[];
}

const keyOf = (m: LoadedManifest): string => `${m.manifest.kind}/${m.manifest.metadata.name}`;
const src = (m: LoadedManifest): SourceRef => ({ file: m.source.file, line: m.source.line, column: m.source.column });

function identity(m: LoadedManifest): string | undefined {
  if (m.manifest.kind === 'DataSource') {
    const spec = (m.manifest as DataSourceManifest).spec;
    return `DataSource:${spec.integration}|${spec.prefix}`;
  }
  if (m.manifest.kind === 'Webhook') return `Webhook:${webhookServiceName(m.manifest as WebhookManifest)}`;
  if (m.manifest.kind !== 'Integration') return undefined;
  const spec = (m.manifest as IntegrationManifest).spec;
  return naturalKey(spec.type, spec.config);
}

function entry(m: LoadedManifest, change: PrChangeKind, fields: ManifestFieldChange[] = [], base?: LoadedManifest): PrChange {
  const c: PrChange = { resourceKind: m.manifest.kind, name: m.manifest.metadata.name, change, source: src(m), fields };
  if (m.manifest.kind === 'Integration') c.integrationType = (m.manifest as IntegrationManifest).spec.type;
  if (base) c.baseSource = src(base);
  if (base && change === 'renamed') c.renamedFrom = base.manifest.metadata.name;
  return c;
}

const KIND_ORDER: Record<string, number> = { Integration: 0, DataSource: 1, Webhook: 2 };

/** Integrations first, then data sources, then webhooks; by name. */
export function byResource(a: { resourceKind: string; name: string }, b: { resourceKind: string; name: string }): number {
  if (a.resourceKind !== b.resourceKind) return (KIND_ORDER[a.resourceKind] ?? 3) - (KIND_ORDER[b.resourceKind] ?? 3);
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Only identities held by exactly one manifest can pair a rename. */
function uniqueByIdentity(list: readonly LoadedManifest[]): Map<string, LoadedManifest> {
  const seen = new Map<string, LoadedManifest | null>();
  for (const m of list) {
    const id = identity(m);
    if (id === undefined) continue;
    seen.set(id, seen.has(id) ? null : m);
  }
  const out = new Map<string, LoadedManifest>();
  for (const [k, v] of seen) if (v) out.set(k, v);
  return out;
}

export function diffRevisions(base: readonly LoadedManifest[], head: readonly LoadedManifest[]): PrChange[] {
  const baseByKey = new Map(base.map((m) => [keyOf(m), m]));
  const headByKey = new Map(head.map((m) => [keyOf(m), m]));
  const added = head.filter((m) => !baseByKey.has(keyOf(m)));
  const removed = base.filter((m) => !headByKey.has(keyOf(m)));
  const out: PrChange[] = [];
  for (const m of head) {
    const old = baseByKey.get(keyOf(m));
    if (!old) continue;
    const fields = diffManifest(old, m);
    if (fields.length) out.push(entry(m, 'changed', fields, old));
  }
  // renames: an added and a removed resource of one kind with the same identity (each unique on its side)
  const removedById = uniqueByIdentity(removed);
  const addedById = uniqueByIdentity(added);
  const paired = new Set<LoadedManifest>();
  for (const [id, m] of addedById) {
    const old = removedById.get(id);
    if (!old) continue;
    paired.add(m).add(old);
    out.push(entry(m, 'renamed', diffManifest(old, m), old));
  }
  for (const m of added) if (!paired.has(m)) out.push(entry(m, 'added', manifestFields(m)));
  for (const m of removed) if (!paired.has(m)) out.push(entry(m, 'removed'));
  return out.sort(byResource);
}
