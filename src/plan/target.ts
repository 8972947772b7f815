/**
 * Targeting (`--only Kind/name`, after Terraform `-target` and Argo CD selective sync), pure.
 *
 * A pattern is `Kind/name`: the kind `Integration`, `DataSource` or `Webhook` (any case) or a glob, the name a glob
 * (`*` any run of characters, `?` one character, `[abc]` / `[a-z]` one of a set). A targeted plan holds only
 * the resources some pattern matches. A delete (a prune candidate, a `govops/delete` manifest, an extra copy of
 * a webhook) stays in it only when a pattern names the resource exactly, without a glob: a targeted apply never
 * prunes what the operator did not name.
 */
import { UserError } from '../errors.js';
import { groupBy } from '../util/multimap.js';
import { warning, type PlanProblem, type PlanWarning } from './notes.js';
import type { PlanTargets, ResourceChange } from './types.js';

export interface Target {
  pattern: string;
  kind: RegExp;
  name: RegExp;
  /** The pattern has no glob character: it names one resource. */
  exact?: { kind: (typeof KINDS)[number]; name: string };
}

const KINDS = ['Integration', 'DataSource', 'Webhook'] as const;
const GLOB = /[*?[\]]/;

function globToRegExp(glob: string, flags = ''): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) throw new Error('an unclosed [');
      let set = glob.slice(i + 1, end);
      if (set === '') throw new Error('an empty []');
      if (set.startsWith('!')) set = `^${set.slice(1)}`;
      re += `[${set.replace(/[\\\]]/g, '\\$&')}]`;
      i = end;
    } else re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, flags);
}

/** Parse `--only` patterns; a malformed one is a user error naming it. */
export function parseTargets(patterns: readonly string[]): Target[] {
  return patterns.map((raw) => {
    const pattern = raw.trim();
    const slash = pattern.indexOf('/');
    const bad = (why: string): UserError =>
      new UserError(`--only ${JSON.stringify(raw)}: ${why}`, 'write Kind/name, e.g. --only Integration/finance-warehouse or --only "Webhook/pager-*"');
    if (slash <= 0 || slash === pattern.length - 1) throw bad('expected Kind/name');
    const kindText = pattern.slice(0, slash);
    const nameText = pattern.slice(slash + 1);
    if (nameText.includes('/')) throw bad('a name has no "/"');
    let kind: RegExp;
    let name: RegExp;
    try {
      kind = globToRegExp(kindText, 'i');
      name = globToRegExp(nameText);
    } catch (err) {
      throw bad((err as Error).message);
    }
    if (!KINDS.some((k) => kind.test(k))) throw bad(`no kind matches ${JSON.stringify(kindText)}: the kinds are Integration, DataSource and Webhook`);
    const target: Target = { pattern, kind, name };
    if (!GLOB.test(pattern)) {
      const exactKind = KINDS.find((k) => k.toLowerCase() === kindText.toLowerCase())!;
      target.exact = { kind: exactKind, name: nameText };
    }
    return target;
  });
}

export function isTargeted(targets: readonly Target[], kind: string, name: string): boolean {
  return targets.some((t) => t.kind.test(kind) && t.name.test(name));
}

export function namedExactly(targets: readonly Target[], kind: string, name: string): boolean {
  return targets.some((t) => t.exact?.kind === kind && t.exact.name === name);
}

export interface TargetMatcher {
  /** The targets that select the resource. */
  hits(kind: string, name: string): Target[];
  targeted(kind: string, name: string): boolean;
  namedExactly(kind: string, name: string): boolean;
}

/**
 * The targets as a lookup made once: the exact ones (no glob) by `Kind/name`, the globs tested one by one. The same
 * answers as `isTargeted` and `namedExactly`, without testing every pattern against every resource (a CI job may
 * pass one exact `--only` per resource a pull request touches: thousands against thousands).
 */
export function targetMatcher(targets: readonly Target[]): TargetMatcher {
  const exact = groupBy(
    targets.filter((t) => t.exact !== undefined),
    (t) => `${t.exact!.kind}/${t.exact!.name}`,
  );
  const globs = targets.filter((t) => t.exact === undefined);
  const globHits = (kind: string, name: string): Target[] => globs.filter((t) => t.kind.test(kind) && t.name.test(name));
  return {
    hits: (kind, name) => {
      const named = exact.get(`${kind}/${name}`);
      const matched = globs.length ? globHits(kind, name) : [];
      return named ? [...named, ...matched] : matched;
    },
    targeted: (kind, name) => exact.has(`${kind}/${name}`) || globs.some((t) => t.kind.test(kind) && t.name.test(name)),
    namedExactly: (kind, name) => exact.has(`${kind}/${name}`),
  };
}

export interface Targeted {
  changes: ResourceChange[];
  targets: PlanTargets;
  /** The errors about a targeted resource (or about none); those about untargeted resources only are now warnings. */
  errors: PlanProblem[];
  warnings: PlanWarning[];
}

/**
 * Keep the changes the targets select (deletes only when named exactly). Plan errors that name resources,
 * none of them targeted, become warnings: a targeted plan is not held up by a problem elsewhere.
 */
export function applyTargets(
  changes: readonly ResourceChange[],
  errors: readonly PlanProblem[],
  patterns: readonly string[],
): Targeted {
  const targets = parseTargets(patterns);
  const match = targetMatcher(targets);
  const kept: ResourceChange[] = [];
  const selected = new Set<string>();
  const warnings: PlanWarning[] = [];
  const used = new Set<Target>();
  const keys = new Set<string>();
  for (const c of changes) {
    const key = `${c.resourceKind}/${c.name}`;
    keys.add(key);
    const hits = match.hits(c.resourceKind, c.name);
    if (hits.length === 0) continue;
    for (const t of hits) used.add(t);
    selected.add(key);
    if (c.action === 'delete' && !match.namedExactly(c.resourceKind, c.name)) {
      warnings.push(warning('targeting', `${key}: not deleted in this targeted plan: a delete needs --only ${key} (exactly, without a glob)`, { kind: c.resourceKind, name: c.name }));
      continue;
    }
    kept.push(c);
  }
  for (const t of targets) if (!used.has(t)) warnings.push(warning('targeting', `--only ${t.pattern} matches no manifest or managed resource`));
  const keptErrors: PlanProblem[] = [];
  for (const e of errors) {
    const about = e.about.map((r) => `${r.kind}/${r.name}`);
    if (about.length > 0 && !about.some((r) => selected.has(r))) warnings.push(warning('targeting', `outside --only: ${e.message}`));
    else keptErrors.push(e);
  }
  const untargeted = [...keys].filter((k) => !selected.has(k)).length;
  return { changes: kept, targets: { only: targets.map((t) => t.pattern), untargeted }, errors: keptErrors, warnings };
}
