/** Pure: per-resource sync state from a reconcile result (for /status and govops_resources). */
import type { ReconcileResult } from '../reconcile/types.js';
import type { ActionKind } from '../plan/types.js';
import { driftFields, type DriftField } from './report.js';

export type SyncState = 'synced' | 'out_of_sync' | 'failed' | 'blocked' | 'suspended';

export interface ResourceState {
  kind: 'Integration' | 'Webhook' | 'DataSource';
  name: string;
  /** Integration type, when known. */
  type?: string;
  liveId?: string;
  /** What the last plan said to do (`noop` when in sync). */
  action: ActionKind;
  syncState: SyncState;
  error?: string;
  reasons?: string[];
  source?: { file: string; line: number };
  /** Not in sync: the fields that differ (live value against the manifest's; credentials only named). */
  fields?: DriftField[];
  /** Manual flow: the scripts to run and the acknowledgment to add (`awaiting`), or that it was given. */
  manualStep?: {
    status: 'awaiting' | 'acknowledged' | 'trusted';
    reason?: string;
    /** The `govops scripts` commands, in order. */
    commands: string[];
    /** The line to add under metadata.annotations. */
    annotation?: string;
  };
}

export function resourceStates(result: ReconcileResult): ResourceState[] {
  const plan = result.plan;
  if (!plan) return [];
  const outcomes = new Map(result.outcomes.filter((o) => o.duplicateOf === undefined).map((o) => [`${o.resourceKind}/${o.name}`, o]));
  const out: ResourceState[] = [];
  for (const c of plan.changes) {
    // Deleting an extra copy of a webhook is not a resource of its own (the kept copy is reported).
    if (c.duplicateOf !== undefined) continue;
    const o = outcomes.get(`${c.resourceKind}/${c.name}`);
    // A `settle` (an owned integration still creating or editing, nothing differing) is no pending change: drift leaves
    // it out too; a run that applies waits for it (its outcome decides), a plan-only one finds nothing to change.
    const pendingChange = (c.action !== 'noop' && c.action !== 'settle') || c.adopt;
    let syncState: SyncState;
    if (o?.result === 'failed') syncState = 'failed';
    else if (o?.result === 'ok') syncState = 'synced';
    else if (c.blocked) syncState = 'blocked';
    else if (c.suspended) syncState = 'suspended';
    else syncState = pendingChange ? 'out_of_sync' : 'synced';
    // A delete that went through leaves nothing behind to report.
    if (c.action === 'delete' && o?.result === 'ok') continue;
    const state: ResourceState = { kind: c.resourceKind, name: c.name, action: c.adopt && c.action === 'noop' ? 'adopt' : c.action, syncState };
    if (c.integrationType) state.type = c.integrationType;
    if (c.liveId) state.liveId = c.liveId;
    if (o?.error && o.result !== 'settling') state.error = o.error; // (a settle still under way: no error, its reason says so)
    else if (c.blocked) state.error = c.blocked.message;
    if (c.reasons.length) state.reasons = c.reasons.map((r) => r.message);
    if (c.source) state.source = { file: c.source.file, line: c.source.line };
    if (syncState !== 'synced' && c.changes.length) state.fields = driftFields(c);
    if (c.manualStep && o?.result !== 'ok') {
      const m = c.manualStep;
      state.manualStep = { status: m.status, commands: m.scripts.map((x) => x.command) };
      if (m.reason) state.manualStep.reason = m.reason;
      if (m.acknowledgment) state.manualStep.annotation = m.acknowledgment.line;
    }
    out.push(state);
  }
  return out;
}

/** The resources of the last plan by kind and sync state (/status `resourceCounts`). */
export function countByKind(states: readonly ResourceState[]): Record<ResourceState['kind'], Partial<Record<SyncState, number>>> {
  const out: Record<ResourceState['kind'], Partial<Record<SyncState, number>>> = { Integration: {}, DataSource: {}, Webhook: {} };
  for (const s of states) out[s.kind][s.syncState] = (out[s.kind][s.syncState] ?? 0) + 1;
  return out;
}

/**
 * Counts by (kind label, sync state); kind is the integration type for integrations, `data_source` for data
 * sources, `webhook` for webhooks.
 */
export function countStates(states: ResourceState[]): Map<string, { kind: string; syncState: SyncState; count: number }> {
  const m = new Map<string, { kind: string; syncState: SyncState; count: number }>();
  for (const s of states) {
    const kind = s.kind === 'Webhook' ? 'webhook' : s.kind === 'DataSource' ? 'data_source' : (s.type ?? 'integration');
    const key = `${kind}\0${s.syncState}`;
    const e = m.get(key) ?? { kind, syncState: s.syncState, count: 0 };
    e.count++;
    m.set(key, e);
  }
  return m;
}
