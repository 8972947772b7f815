/**
 * The plans a preview needs: the head (what merging does) and the base (drift), against the state the daemon
 * has: the given state file, or, with a base and no state file given, ownership derived from the base revision
 * (ownership.ts). Secret references CI cannot resolve are unknowns that never count as changes.
 */
import type { LoadedManifest } from '../manifests/types.js';
import type { ResolvedSecrets } from '../manifests/secrets.js';
import { configShapes } from '../manifests/shapes.js';
import { planChanges } from '../plan/planner.js';
import type { DesiredResource, Plan, PlanOptions } from '../plan/types.js';
import { loadState, newState } from '../state/store.js';
import type { GovopsState } from '../state/types.js';
import type { LiveLists } from './live-view.js';
import { stateFromBase } from './ownership.js';
import { desiredWithUnknowns, type UnknownSecret } from './unknown-secrets.js';

export interface PlanSettings {
  statePath: string;
  /** The state file was given explicitly (with a base, only then is it read). */
  stateGiven?: boolean;
  plan: PlanOptions;
}

export interface PlanInputs {
  head: LoadedManifest[];
  base: LoadedManifest[];
  headResolved: ResolvedSecrets[];
  baseResolved: ResolvedSecrets[];
  live: LiveLists;
  hasBase: boolean;
  revision: string | undefined;
}

export interface Planned {
  headPlan: Plan;
  basePlan?: Plan;
  headDesired: DesiredResource[];
  state: GovopsState;
  unknown: UnknownSecret[];
}

/** The plans of the head and the base, against the state: the given file, or ownership from the base. */
export async function planBoth(opts: PlanSettings, i: PlanInputs): Promise<Planned> {
  const live = {
    integrations: i.live.integrations,
    webhooks: i.live.webhooks,
    ...(i.live.dataSources ? { dataSources: i.live.dataSources } : {}),
    ...(i.live.dataSourcesUnsupported !== undefined ? { dataSourcesUnsupported: i.live.dataSourcesUnsupported } : {}),
  };
  const shapes = configShapes();
  const given = !i.hasBase || opts.stateGiven ? await loadState(opts.statePath) : undefined;
  let state: GovopsState;
  if (given) state = given;
  else {
    const key = newState().fingerprintKey;
    const empty: GovopsState = { version: 1, fingerprintKey: key, resources: [] };
    const baseDesired = desiredWithUnknowns(i.base, i.baseResolved, empty, live).desired;
    // Ownership comes from the whole base revision, whatever --only selects.
    const { only: _only, ...whole } = opts.plan;
    state = stateFromBase(key, baseDesired, planChanges({ desired: baseDesired, live, state: empty, options: whole, shapes }));
  }
  const { desired: headDesired, unknown } = desiredWithUnknowns(i.head, i.headResolved, state, live);
  const headPlan = planChanges({ desired: headDesired, live, state, options: opts.plan, shapes, ...(i.revision !== undefined ? { revision: i.revision } : {}) });
  if (!i.hasBase) return { headPlan, headDesired, state, unknown };
  const baseDesired = desiredWithUnknowns(i.base, i.baseResolved, state, live).desired;
  const basePlan = planChanges({ desired: baseDesired, live, state, options: opts.plan, shapes });
  return { headPlan, basePlan, headDesired, state, unknown };
}
