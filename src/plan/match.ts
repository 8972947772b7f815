/**
 * Identity matching (pure): which live resource is each manifest's?
 * Order: the id recorded in govops state for (kind, name); then the natural key
 * (integrations: `naturalKey` of kinds.ts; webhooks: name). Two live matches are an error.
 */
import type { ManagedResource } from '../state/types.js';
import { problem, reason, type PlanProblem, type Reason } from './notes.js';

export interface Match<L> {
  live?: L;
  /** The state entry for this manifest's name (if any); for a rename, the old name's entry. */
  state?: ManagedResource;
  /** Found by natural key and not owned: adopted. */
  adopt: boolean;
  /** Found by natural key and owned under another, removed manifest name. */
  renamedFrom?: string;
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
  keyOfLive(l: L): string;
}

export function matchResources<D, L extends { id: string }>(input: MatchInput<D, L>): MatchResult<L> {
  const { kind } = input;
  const stateEntries = input.state.filter((s) => s.kind === kind);
  const stateByName = new Map(stateEntries.map((s) => [s.name, s]));
  const stateById = new Map(stateEntries.map((s) => [s.id, s]));
  const liveById = new Map(input.live.map((l) => [l.id, l]));
  const desiredNames = new Set(input.desired.map(input.nameOf));
  // Natural keys of the live resources: worked out only when a manifest is not matched by its recorded
  // id (in a steady state every one is; a key may cost a normalisation of the config).
  let byKey: Map<string, L[]> | undefined;
  const liveByKey = (): Map<string, L[]> => {
    if (byKey) return byKey;
    byKey = new Map<string, L[]>();
    for (const l of input.live) {
      const k = input.keyOfLive(l);
      const list = byKey.get(k);
      if (list) list.push(l);
      else byKey.set(k, [l]);
    }
    return byKey;
  };

  const matches = new Map<string, Match<L>>();
  const claimed = new Map<string, string>(); // live id -> manifest name
  const renamed = new Set<string>();
  const errors: PlanProblem[] = [];

  // pass 1: the id recorded in state
  for (const d of input.desired) {
    const name = input.nameOf(d);
    const st = stateByName.get(name);
    const live = st ? liveById.get(st.id) : undefined;
    if (st && live) {
      // `govops state adopt --id` recorded it and nothing was applied since: an adoption of that id.
      const reasons = st.explicitAdopt ? [reason('adopted', `adopted explicitly (govops state adopt --id ${st.id})`)] : [];
      matches.set(name, { live, state: st, adopt: st.explicitAdopt === true, reasons });
      claimed.set(live.id, name);
    }
  }
  // pass 2: the natural key
  for (const d of input.desired) {
    const name = input.nameOf(d);
    if (matches.has(name)) continue;
    const st = stateByName.get(name);
    const reasons: Reason[] = [];
    if (st) reasons.push(reason('recorded-id-missing', `recorded id ${st.id} no longer exists in the service`));
    const key = input.keyOfDesired(d);
    const candidates = liveByKey().get(key) ?? [];
    if (candidates.length > 1) {
      errors.push(
        problem(
          `${kind}/${name}: ${candidates.length} live resources match its identity (${key}): ids ` +
            `${candidates.map((c) => c.id).join(', ')}; remove the duplicates in the service first`,
          { kind, name },
        ),
      );
      matches.set(name, { state: st, adopt: false, reasons });
      continue;
    }
    const live = candidates[0];
    if (!live) {
      matches.set(name, { state: st, adopt: false, reasons });
      continue;
    }
    const other = claimed.get(live.id);
    if (other) {
      errors.push(problem(`${kind}/${name} and ${kind}/${other} both match live id ${live.id} (${key})`, { kind, name }, { kind, name: other }));
      matches.set(name, { state: st, adopt: false, reasons });
      continue;
    }
    claimed.set(live.id, name);
    const owner = stateById.get(live.id);
    if (owner && owner.name !== name && !desiredNames.has(owner.name)) {
      renamed.add(owner.name);
      reasons.push(reason('renamed', `renamed from ${kind}/${owner.name} (live id ${live.id})`));
      matches.set(name, { live, state: owner, adopt: false, renamedFrom: owner.name, reasons });
    } else if (owner && owner.name !== name) {
      errors.push(problem(`${kind}/${name} matches live id ${live.id} (${key}), which govops manages as ${kind}/${owner.name}`, { kind, name }, { kind, name: owner.name }));
      matches.set(name, { state: st, adopt: false, reasons });
    } else {
      reasons.push(reason('adopted', `exists in the service (id ${live.id}) but not in govops state: adopted`));
      matches.set(name, { live, state: st, adopt: true, reasons });
    }
  }

  const orphans = stateEntries
    .filter((s) => !desiredNames.has(s.name) && !renamed.has(s.name))
    .map((s) => ({ state: s, live: liveById.get(s.id) }));
  return { matches, orphans, errors };
}
