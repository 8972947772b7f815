/**
 * Ignored fields (`govops/ignore-fields`, after Argo CD `ignoreDifferences` with `RespectIgnoreDifferences`),
 * pure. An ignored field is sent when govops creates the resource, never compared afterwards, and kept as it
 * is live whenever govops changes the resource in place (an integration's update, a webhook's replace, its
 * only way to change): another team's setting is never overwritten. A live credential (a masked key, anywhere
 * inside the value, or the mask itself, whatever the service masks it with) cannot be kept: the manifest's value
 * is sent for it.
 */
import type { LiveIntegration, LiveWebhook } from '../api/types.js';
import { looksMasked } from '../service/kinds.js';
import { isSensitiveKey } from '../kinds/registry.js';
import { isPlainObject, valueAt } from '../util/object.js';
import { copyPlain } from '../util/copy.js';
import { comparable, type ConfigShapes } from './shape.js';
import type { DesiredResource, Plan } from './types.js';
import { firstBy } from '../util/multimap.js';

/** Set (or with `undefined`, remove) a value at a path, creating objects on the way. Mutates `root`. */
function setPath(root: Record<string, unknown>, parts: readonly string[], value: unknown): void {
  let cur = root;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (!isPlainObject(next)) {
      if (value === undefined) return;
      cur[part] = {};
    }
    cur = cur[part] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1]!;
  if (value === undefined) delete cur[last];
  else cur[last] = value;
}

/** A copy of `obj` without the given dotted paths (relative to `obj`). */
export function withoutPaths(obj: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  if (paths.length === 0) return obj;
  const copy = copyPlain(obj);
  for (const p of paths) setPath(copy, p.split('.'), undefined);
  return copy;
}

/** The config-relative parts of an integration's ignored paths (`config.audit.enabled` → `audit.enabled`). */
export function configPaths(ignored: readonly string[] | undefined): string[] {
  return (ignored ?? []).filter((p) => p.startsWith('config.')).map((p) => p.slice('config.'.length));
}

/** The value holds a credential the service returned: a masked value, or any value under a masked key (whatever it shows). */
function masked(v: unknown): boolean {
  if (looksMasked(v)) return true;
  if (Array.isArray(v)) return v.some(masked);
  if (isPlainObject(v)) return Object.entries(v).some(([k, x]) => (isSensitiveKey(k) && x !== undefined && x !== null) || masked(x));
  return false;
}

/** The body govops sends when it changes an existing resource: ignored fields as they are live. */
function preserved(d: DesiredResource, live: LiveIntegration | LiveWebhook, shapes: ConfigShapes): DesiredResource {
  const out = copyPlain(d);
  if (out.kind === 'Integration') {
    const l = live as LiveIntegration;
    const config = (out.body.config ??= {});
    // Known fields in the shape govops compares (numbers as numbers...); unknown ones as the service sent them.
    const known = comparable(shapes, l.type, l.config);
    for (const rel of configPaths(out.ignoreFields)) {
      const parts = rel.split('.');
      const raw = valueAt(l.config, parts);
      if (isSensitiveKey(parts[parts.length - 1]!) || masked(raw)) continue;
      const value = valueAt(known, parts) ?? raw;
      setPath(config, parts, value === undefined ? undefined : copyPlain(value));
    }
    return out;
  }
  const w = live as LiveWebhook;
  const body = out.body as unknown as Record<string, unknown>;
  for (const field of out.ignoreFields ?? []) {
    const value = (w as unknown as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) body[field] = copyPlain(value);
  }
  return out;
}

/**
 * The desired resources apply sends, given the plan and live state: for every in-place change (an update, a
 * webhook's replace) of a resource with ignored fields, those fields take their live values. Creates (and an
 * integration's replace, which creates a new one) send the manifest's values.
 */
export function preserveIgnoredFields(
  desired: readonly DesiredResource[],
  plan: Plan,
  live: { integrations: readonly LiveIntegration[]; webhooks: readonly LiveWebhook[] },
  shapes: ConfigShapes,
): DesiredResource[] {
  const inPlace = new Map<string, string>();
  for (const c of plan.changes) {
    if (!c.ignoredFields?.length || c.liveId === undefined) continue;
    if ((c.resourceKind === 'Integration' && c.action === 'update') || (c.resourceKind === 'Webhook' && c.action === 'replace')) {
      inPlace.set(`${c.resourceKind}/${c.name}`, c.liveId);
    }
  }
  if (inPlace.size === 0) return [...desired];
  // the live item of each id as a scan finds it (made once: a scan per resource was quadratic)
  const integrations = firstBy(live.integrations, (x) => x.id);
  const webhooks = firstBy(live.webhooks, (x) => x.id);
  return desired.map((d) => {
    const id = inPlace.get(`${d.kind}/${d.name}`);
    if (id === undefined) return d;
    const l = d.kind === 'Integration' ? integrations.get(id) : webhooks.get(id);
    return l ? preserved(d, l, shapes) : d;
  });
}
