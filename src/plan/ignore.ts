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
import { NON_EDITABLE, isIntegrationType, isSensitiveKey } from '../kinds/registry.js';
import { isPlainObject, valueAt } from '../util/object.js';
import { copyPlain } from '../util/copy.js';
import { deepEqual } from './diff.js';
import { comparable, type ConfigShapes } from './shape.js';
import type { DesiredIntegration, DesiredResource, Plan } from './types.js';
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

/**
 * The non-editable config fields (each kind's `nonEditable`) the manifest writes otherwise than the service holds them,
 * with the same meaning as govops compares them (a host in another case, a workspace URL as its bare host): their
 * config-relative paths and the live spelling. Strings on both sides only (a value in another JSON form is sent as
 * the manifest writes it, the form the interface gives).
 */
function liveSpellings(d: DesiredIntegration, l: LiveIntegration, shapes: ConfigShapes): Array<[string[], string]> {
  const type = d.body.type;
  const config = d.body.config;
  if (!config || l.type !== type || !isIntegrationType(type)) return [];
  const out: Array<[string[], string]> = [];
  let want: Record<string, unknown> | undefined;
  let have: Record<string, unknown> | undefined;
  for (const path of NON_EDITABLE[type]) {
    if (!path.startsWith('config.')) continue;
    const parts = path.slice('config.'.length).split('.');
    const mine = valueAt(config, parts);
    const theirs = valueAt(l.config, parts);
    if (typeof mine !== 'string' || typeof theirs !== 'string' || mine === theirs || looksMasked(theirs)) continue;
    want ??= comparable(shapes, type, config);
    have ??= comparable(shapes, type, l.config);
    if (deepEqual(valueAt(want, parts), valueAt(have, parts))) out.push([parts, theirs]);
  }
  return out;
}

/**
 * The body govops sends when it changes an existing resource: ignored fields as they are live, and an integration's
 * non-editable fields as the service spells them when they mean the same (`liveSpellings`): the plan calls them no
 * change, and a service comparing what it stored with what it is sent would refuse the update as a change of them.
 */
function preserved(d: DesiredResource, live: LiveIntegration | LiveWebhook, shapes: ConfigShapes): DesiredResource {
  if (d.kind === 'Integration') {
    const l = live as LiveIntegration;
    const spellings = liveSpellings(d, l, shapes);
    if (spellings.length === 0 && !d.ignoreFields?.length) return d;
    const out = copyPlain(d);
    const config = (out.body.config ??= {});
    for (const [parts, value] of spellings) setPath(config, parts, value);
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
  const out = copyPlain(d);
  const w = live as LiveWebhook;
  const body = out.body as unknown as Record<string, unknown>;
  for (const field of out.ignoreFields ?? []) {
    const value = (w as unknown as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) body[field] = copyPlain(value);
  }
  return out;
}

/** The body an in-place update of `d` sends to the live integration `live` (what apply sends, a dry run too). */
export function updateBody(d: DesiredIntegration, live: LiveIntegration, shapes: ConfigShapes): DesiredIntegration['body'] {
  return (preserved(d, live, shapes) as DesiredIntegration).body;
}

/**
 * The desired resources apply sends, given the plan and live state: for every in-place change (an update, a
 * webhook's replace) of a resource with ignored fields, those fields take their live values; an integration update
 * also keeps the live spelling of its non-editable fields (`liveSpellings`). Creates (and an integration's replace,
 * which creates a new one) send the manifest's values.
 */
export function preserveIgnoredFields(
  desired: readonly DesiredResource[],
  plan: Plan,
  live: { integrations: readonly LiveIntegration[]; webhooks: readonly LiveWebhook[] },
  shapes: ConfigShapes,
): DesiredResource[] {
  const inPlace = new Map<string, string>();
  for (const c of plan.changes) {
    if (c.liveId === undefined) continue;
    // every integration update (its non-editable fields keep their live spelling); a webhook's replace when it ignores fields
    if ((c.resourceKind === 'Integration' && c.action === 'update') || (c.ignoredFields?.length && c.resourceKind === 'Webhook' && c.action === 'replace')) {
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
