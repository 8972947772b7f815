/**
 * Manifest names for exported resources (pure): derived from each resource's natural key, valid
 * (`metadata.name`: lower-case letters, digits and '-', at most 63), unique per kind and stable (the same
 * service gives the same names, whatever order it lists them in). Names that collide after sanitising: the
 * resource whose natural key sorts first keeps the plain name, each other one gets `-` and 6 hex digits of
 * a hash of its natural key (docs/decisions.md "Export names").
 */
import { hash } from 'node:crypto';
import { appendTo } from '../util/multimap.js';

export const MAX_NAME = 63;
export const NAME_PATTERN = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** `text` as a valid manifest name ('' when nothing of it is usable). */
export function sanitizeName(text: string, max = MAX_NAME): string {
  const plain = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // the accents NFKD split off
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return plain.slice(0, max).replace(/-+$/, '');
}

export interface NameRequest {
  /** What identifies the resource in the service (unique per resource; ties broken by `id`). */
  key: string;
  /** The readable part the name is made of, before sanitising. */
  base: string;
  /** Used when `base` sanitises to nothing (e.g. the kind). */
  fallback: string;
  id: string;
}

const suffixOf = (key: string): string => hash('sha256', key, 'hex').slice(0, 6);

/** A name for each request (same order as given): unique among them. */
export function assignNames(requests: readonly NameRequest[]): string[] {
  const bases = requests.map((r) => sanitizeName(r.base) || sanitizeName(r.fallback) || 'resource');
  const groups = new Map<string, number[]>();
  bases.forEach((b, i) => appendTo(groups, b, i));
  const out: string[] = [...bases];
  const taken = new Set(bases);
  for (const [base, members] of groups) {
    if (members.length < 2) continue;
    // the first natural key (then id) keeps the plain name; the others a suffix from their own key
    const sorted = [...members].sort((a, b) => cmp(requests[a]!.key, requests[b]!.key) || cmp(requests[a]!.id, requests[b]!.id));
    for (const i of sorted.slice(1)) {
      const r = requests[i]!;
      for (let n = 0; ; n++) {
        const suffix = suffixOf(n === 0 ? r.key : `${r.key}#${r.id}#${n}`);
        const name = `${base.slice(0, MAX_NAME - 7).replace(/-+$/, '')}-${suffix}`;
        if (!taken.has(name)) {
          taken.add(name);
          out[i] = name;
          break;
        }
      }
    }
  }
  return out;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An environment-variable name: `PREFIX` + the parts in upper snake case (camelCase split). */
export function envName(prefix: string, parts: readonly string[]): string {
  const snake = parts
    .map((p) =>
      p
        .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
        .replace(/[^A-Za-z0-9]+/g, '_')
        .toUpperCase(),
    )
    .join('_')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
  return `${prefix}${snake}`;
}
