/**
 * Where a dry run may send secrets (pure). A dry run runs the service's validation tests, which connect to
 * the integration's host with its credentials: a pull request that points an integration at a host of its
 * choosing, with the operator's secrets resolved, would hand those secrets to that host. So the preview sends
 * a dry run carrying secrets only when
 * - every *target field* (where the service connects) is the same at the head as at the base revision, and
 *   the same as the live integration's where the service shows it (a DELETE's payload: each target field it names,
 *   an okta `idpHost`, is one the base revision's deleteCredentials or config already names), and
 * - every secret reference it resolves is one the base revision already gives that same resource;
 * or, for a resource the base revision does not have at all, only when the operator opted in
 * (`--dry-run-new-targets`). A request that resolves no secret reference (no credentials, or literal values
 * written in the pull request itself) hands over nothing of the operator's and is always allowed.
 */
import path from 'node:path';
import { describeRef, isSecretRef } from '../manifests/secrets.js';
import { isPlainObject } from '../util/object.js';

/**
 * Config fields (dotted, inside `config`) that say where the service connects with the credentials:
 * hosts and URLs, and the ODBC connection-string arguments, which can name another server.
 * Kinds whose credentials go to their cloud provider's own endpoints (object stores, dataset warehouses)
 * have none.
 */
export const TARGET_FIELDS: readonly string[] = [
  'host',
  'workspaceUrl',
  'connectArgs',
  'privilegedConnectArgs',
  'okta.idpHost',
  'oAuthClientConfig.authorityUrl',
];

function at(root: unknown, dotted: string): unknown {
  let cur = root;
  for (const part of dotted.split('.')) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

/**
 * A comparable form of a target value: a URL's origin (scheme, host, port) and its authority as written, a host in
 * lower case. The authority as RFC 3986 splits it (up to the first `/`, `?` or `#`) counts too, because parsers
 * disagree on the host of an odd URL: `https://lake.example.com\@evil.example.net/` has the origin of
 * lake.example.com for WHATWG (Node), but Python's `urlsplit` takes `lake.example.com\` for the userinfo and
 * connects to evil.example.net. So a URL is the same target only when both readings are.
 */
export function normalizeTarget(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (isSecretRef(v)) return `ref:${describeRef(v)}`;
  if (typeof v !== 'string') return JSON.stringify(v);
  const s = v.trim();
  const written = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(s);
  if (written) {
    try {
      const u = new URL(s);
      return `${u.protocol}//${u.host.toLowerCase().replace(/\.$/, '')} ${written[1]!.toLowerCase().replace(/\.$/, '')}`;
    } catch {
      return s.toLowerCase();
    }
  }
  return s.toLowerCase().replace(/\.$/, '');
}

/**
 * A path on the host the service joins to a URL field (lakehouse `httpPath`): another path on the same host is the
 * same target, but only a plain absolute path stays on the host whatever the join. Joined by concatenation,
 * `@evil.example.net/x` or `.evil.example.net/x` names another host; joined as a URL (Python's `urljoin`, WHATWG),
 * `//evil.example.net/x`, `\\evil.example.net/x` or `/<tab>/evil.example.net/x` do. Such a value is compared as it is.
 */
const PATH_FIELDS: readonly string[] = ['httpPath'];
const PLAIN_PATH = /^\/(?:[^/\\\s\p{Cc}][^\\\s\p{Cc}]*)?$/u;

function normalizePath(v: unknown): string | undefined {
  if (typeof v === 'string' && PLAIN_PATH.test(v)) return 'a path on the host';
  return normalizeTarget(v);
}

/** The target fields of a config that are set, normalised. */
export function targetsOf(config: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of TARGET_FIELDS) {
    const v = normalizeTarget(at(config, f));
    if (v !== undefined) out[f] = v;
  }
  for (const f of PATH_FIELDS) {
    const v = normalizePath(at(config, f));
    if (v !== undefined) out[f] = v;
  }
  return out;
}

/** Secret references (as `fromEnv: X` / `fromFile: Y`) anywhere under a manifest spec value. */
export function secretRefsOf(value: unknown, out: Set<string> = new Set()): Set<string> {
  if (isSecretRef(value)) out.add(describeRef(value));
  else if (Array.isArray(value)) for (const v of value) secretRefsOf(v, out);
  else if (isPlainObject(value)) for (const v of Object.values(value)) secretRefsOf(v, out);
  return out;
}

/**
 * `secretRefsOf` with each `fromFile` reference read from `folder` (relative to the manifests' root, `/`-separated):
 * without a secrets folder a reference is relative to its manifest's folder, so `fromFile: pw` names another file
 * once a pull request moves the manifest. Undefined `folder`: the references as written (a secrets folder is set).
 */
export function refsFrom(value: unknown, folder: string | undefined): Set<string> {
  const refs = secretRefsOf(value);
  if (folder === undefined) return refs;
  const out = new Set<string>();
  for (const r of refs) {
    const file = r.startsWith('fromFile: ') ? r.slice('fromFile: '.length) : undefined;
    out.add(file === undefined ? r : `fromFile: ${path.posix.join(folder, file.replace(/\\/g, '/'))}`);
  }
  return out;
}

export interface TargetCheckInput {
  /** What the request sends, as in the manifest (references unresolved): the config, or the delete payload. */
  sends: unknown;
  /** The config the request sends (POST, PUT), whose targets must be the base's; absent for a DELETE (it goes to the live host). */
  head?: { config?: unknown };
  /**
   * The delete payload a DELETE sends (spec.deleteCredentials): the live host gets it, but it can name a host of its
   * own (an okta `idpHost`, an `oAuthClientConfig.authorityUrl`) the service signs in to with it; each must be one the
   * base revision already sends secrets to (its deleteCredentials', else its config's).
   */
  headDelete?: { deleteCredentials?: unknown };
  /** Its spec at the base revision (same name, or the name it was renamed from); undefined when new. */
  base?: { config?: unknown; deleteCredentials?: unknown };
  /** The live integration's config as the service shows it (masked fields are skipped). */
  live?: unknown;
  /** The operator allows dry runs of resources the base revision does not have. */
  allowNewTargets: boolean;
  /** Without a secrets folder: the folders (relative to the root) of the head's and the base's manifests (`refsFrom`). */
  headFolder?: string;
  baseFolder?: string;
}

export type TargetCheck = { allowed: true } | { allowed: false; code: 'new-target' | 'target-changed' | 'secret-moved'; reason: string };

const MASKED = '********';

export function checkTargets(input: TargetCheckInput): TargetCheck {
  const refs = refsFrom(input.sends, input.headFolder);
  if (refs.size === 0) return { allowed: true };
  if (!input.base) {
    return input.allowNewTargets
      ? { allowed: true }
      : {
          allowed: false,
          code: 'new-target',
          reason: 'new in this pull request: its secrets would go to a host the base revision never used (the operator can allow it with --dry-run-new-targets)',
        };
  }
  const base = targetsOf(input.base.config);
  if (input.head) {
    const head = targetsOf(input.head.config);
    for (const f of new Set([...Object.keys(head), ...Object.keys(base)])) {
      if (head[f] !== base[f]) {
        return { allowed: false, code: 'target-changed', reason: `config.${f} differs from the base revision: no secret is sent to a new host` };
      }
    }
  }
  if (input.headDelete) {
    const sent = targetsOf(input.headDelete.deleteCredentials);
    const baseDelete = targetsOf(input.base.deleteCredentials);
    for (const [f, v] of Object.entries(sent)) {
      if (v !== baseDelete[f] && v !== base[f]) {
        return { allowed: false, code: 'target-changed', reason: `deleteCredentials.${f} differs from the base revision: no secret is sent to a new host` };
      }
    }
  }
  if (input.live !== undefined) {
    for (const f of [...TARGET_FIELDS, ...PATH_FIELDS]) {
      const raw = at(input.live, f);
      if (raw === undefined || raw === MASKED) continue;
      if ((PATH_FIELDS.includes(f) ? normalizePath(raw) : normalizeTarget(raw)) !== base[f]) {
        return { allowed: false, code: 'target-changed', reason: `the live integration's config.${f} differs from the base revision: no secret is sent to it` };
      }
    }
  }
  const baseRefs = refsFrom([input.base.config, input.base.deleteCredentials], input.baseFolder);
  const moved = [...refs].filter((r) => !baseRefs.has(r)).sort();
  if (moved.length) {
    return {
      allowed: false,
      code: 'secret-moved',
      reason: `${moved.join(', ')} ${moved.length === 1 ? 'is' : 'are'} not used by this resource in the base revision: it is not sent to its host`,
    };
  }
  return { allowed: true };
}
