/**
 * Identity matching (pure): which live resource is each manifest's?
 * Order: the id recorded in govops state for (kind, name); then the natural key
 * (integrations: `naturalKey` of kinds.ts; webhooks: name). Two live matches are an error.
 */
import type { ManagedResource } from '../state/types.js';
import { problem, reason, type PlanProblem, type Reason } from './notes.js';
import { appendTo } from '../util/multimap.js';

export interface Match<L> {
  live?: L;
  /** The state entry for this manifest's name (if any); for a rename, the old name's entry. */
  state?: ManagedResource;
  /** Found by natural key and not owned, or recorded by `govops state adopt`: adopted. */
  adopt: boolean;
  /** The adoption was recorded by the operator (`govops state adopt --id`, `export --state`), not found by natural key. */
  explicitAdopt?: boolean;
  /** Found by natural key and owned under another, removed manifest name. */
  renamedFrom?: string;
  /**
   * Which live resource is its cannot be told (two match its identity, or the one that does is another manifest's or
   * managed under another name): the plan has an error, and the change is blocked, never a create.
   */
  conflict?: string;
  reasons: Reason[];
}

export interface MatchResult<L> {
  matches: Map<string, Match<L>>;
  /** State entries of this kind with no manifest (prune candidates), with their live resource if it exists. */
  orphans: Array<{ state: ManagedResource; live?: L }>;
  errors: PlanProblem[];
}

export interface MatchInput<D, L> {
  kind: 'Integration' | 'Webhook' | 'DataSource';
  desired: D[];
  live: L[];
  state: ManagedResource[];
  nameOf(d: D): string;
  keyOfDesired(d: D): string;
  /** Undefined: the live resource has no natural key govops can work out (an unknown kind): it matches no manifest. */
  keyOfLive(l: L): string | undefined;
}

/** One matching in progress: the indexes of its input and what is matched so far. */
interface Matching<D, L> {
  input: MatchInput<D, L>;
  stateByName: Map<string, ManagedResource>;
  stateById: Map<string, ManagedResource>;
  liveById: Map<string, L>;
  desiredNames: Set<string>;
  /** The live resources by natural key (worked out on first use). */
  liveByKey: () => Map<string, L[]>;
  matches: Map<string, Match<L>>;
  /** live id -> manifest name */
  claimed: Map<string, string>;
  /** State names a manifest took over under another name. */
  renamed: Set<string>;
  errors: PlanProblem[];
}

export function matchResources<D, L extends { id: string }>(input: MatchInput<D, L>): MatchResult<L> {
  const stateEntries = input.state.filter((s) => s.kind === input.kind);
  const m: Matching<D, L> = {
    input,
    stateByName: new Map(stateEntries.map((s) => [s.name, s])),
    stateById: new Map(stateEntries.map((s) => [s.id, s])),
    liveById: new Map(input.live.map((l) => [l.id, l])),
    desiredNames: new Set(input.desired.map(input.nameOf)),
    liveByKey: lazyLiveByKey(input),
    matches: new Map(),
    claimed: new Map(),
    renamed: new Set(),
    errors: [],
  };
  // pass 1: the id recorded in state
  for (const d of input.desired) matchByRecordedId(m, input.nameOf(d));
  // pass 2: the natural key
  for (const d of input.desired) {
    const name = input.nameOf(d);
    if (!m.matches.has(name)) matchByNaturalKey(m, d, name);
  }
  const orphans = stateEntries
    .filter((s) => !m.desiredNames.has(s.name) && !m.renamed.has(s.name))
    .map((s) => ({ state: s, live: m.liveById.get(s.id) }));
  return { matches: m.matches, orphans, errors: m.errors };
}

/**
 * Natural keys of the live resources: worked out only when a manifest is not matched by its recorded id (in a
 * steady state every one is; a key may cost a normalisation of the config).
 */
function lazyLiveByKey<D, L>(input: MatchInput<D, L>): () => Map<string, L[]> {
  let byKey: Map<string, L[]> | undefined;
  return () => {
    if (byKey) return byKey;
    byKey = new Map<string, L[]>();
    for (const l of input.live) {
      const key = input.keyOfLive(l);
      if (key !== undefined) appendTo(byKey, key, l);
    }
    return byKey;
  };
}

function matchByRecordedId<D, L extends { id: string }>(m: Matching<D, L>, name: string): void {
  const st = m.stateByName.get(name);
  const live = st ? m.liveById.get(st.id) : undefined;
  if (!st || !live) return;
  // `govops state adopt --id` recorded it and nothing was applied since: an adoption of that id.
  const reasons = st.explicitAdopt ? [reason('adopted', `adopted explicitly (govops state adopt --id ${st.id})`)] : [];
  m.matches.set(name, { live, state: st, adopt: st.explicitAdopt === true, ...(st.explicitAdopt ? { explicitAdopt: true } : {}), reasons });
  m.claimed.set(live.id, name);
}

/** A manifest whose recorded id is not live (or that has none): the one live resource of its natural key. */
function matchByNaturalKey<D, L extends { id: string }>(m: Matching<D, L>, d: D, name: string): void {
  const { kind } = m.input;
  const st = m.stateByName.get(name);
  const reasons: Reason[] = [];
  // (a webhook create still held pending has no id yet: nothing recorded has gone)
  if (st && st.id !== '') reasons.push(reason('recorded-id-missing', `recorded id ${st.id} no longer exists in the service`));
  const unmatched = (conflict?: PlanProblem): void => {
    m.matches.set(name, { state: st, adopt: false, reasons, ...(conflict ? { conflict: conflict.message } : {}) });
  };
  const conflicting = (p: PlanProblem): void => {
    m.errors.push(p);
    unmatched(p);
  };
  const key = m.input.keyOfDesired(d);
  const candidates = m.liveByKey().get(key) ?? [];
  if (candidates.length > 1) {
    return conflicting(
      problem(
        `${kind}/${name}: ${candidates.length} live resources match its identity (${key}): ids ` +
          `${candidates.map((c) => c.id).join(', ')}; remove the duplicates in the service first`,
        { kind, name },
      ),
    );
  }
  const live = candidates[0];
  if (!live) return unmatched();
  const other = m.claimed.get(live.id);
  if (other) {
    return conflicting(problem(`${kind}/${name} and ${kind}/${other} both match live id ${live.id} (${key})`, { kind, name }, { kind, name: other }));
  }
  m.claimed.set(live.id, name);
  const owner = m.stateById.get(live.id);
  if (owner && owner.name !== name && !m.desiredNames.has(owner.name)) {
    m.renamed.add(owner.name);
    reasons.push(reason('renamed', `renamed from ${kind}/${owner.name} (live id ${live.id})`));
    // An entry `govops state adopt --id` (or `export --state`) recorded, renamed before anything was applied
    // (an exported manifest moved into an environment's base): still an adoption, nothing sent.
    const adopted = owner.explicitAdopt === true;
    if (adopted) reasons.push(reason('adopted', `adopted explicitly (govops state adopt --id ${owner.id})`));
    m.matches.set(name, { live, state: owner, adopt: adopted, ...(adopted ? { explicitAdopt: true } : {}), renamedFrom: owner.name, reasons });
  } else if (owner && owner.name !== name) {
    conflicting(problem(`${kind}/${name} matches live id ${live.id} (${key}), which govops manages as ${kind}/${owner.name}`, { kind, name }, { kind, name: owner.name }));
  } else {
    reasons.push(reason('adopted', `exists in the service (id ${live.id}) but not in govops state: adopted`));
    m.matches.set(name, { live, state: st, adopt: true, reasons });
  }
}
