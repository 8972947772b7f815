/**
 * The manual-flow acknowledgment in the preview (README "Manual-flow integrations"): live, the plan's gate says
 * it (src/plan/manual-steps.ts); offline, it is computed from the manifest as the plan would (the token needs
 * neither the service nor a secret), so a reviewer sees whether merging applies the change or it waits.
 */
import { ackPhaseOf, acknowledgmentLine, parseAcknowledgments, MANUAL_STEP_ANNOTATION, type Acknowledgment } from '../plan/acknowledgment.js';
import type { ManualStepGate, ManualStepsMode } from '../plan/types.js';
import { manualStepToken } from '../reconcile/manual-step-token.js';
import type { IntegrationManifest } from '../manifests/types.js';
import type { ManualAck, ManualStep } from './types.js';

/**
 * With a pull request (`pr`: the base revision's manifest, undefined for one the pull request adds): whether the
 * entries that acknowledge the change are new in it. govops cannot see whether a script ran; a reviewer must know
 * that the line merging acts on is the pull request's own claim.
 */
export interface AckContext {
  base: IntegrationManifest | undefined;
}

function fromPullRequest(ack: ManualAck, expected: readonly Acknowledgment[], pr: AckContext | undefined): ManualAck {
  if (ack.status !== 'acknowledged' || pr === undefined || expected.length === 0) return ack;
  const before = parseAcknowledgments(pr.base?.metadata.annotations?.[MANUAL_STEP_ANNOTATION]);
  const carried = expected.every((e) => before.some((b) => b.phase === e.phase && b.token === e.token));
  return carried ? ack : { ...ack, fromPullRequest: true };
}

export function ackOfGate(gate: ManualStepGate, pr?: AckContext): ManualAck {
  const ack: ManualAck = { status: gate.status };
  if (gate.acknowledgment) ack.annotation = gate.acknowledgment.line;
  if (gate.reason !== undefined) ack.reason = gate.reason;
  return fromPullRequest(ack, parseAcknowledgments(gate.acknowledgment?.value), pr);
}

/**
 * Offline: the acknowledgment the steps need, from the manifest that will carry it (`undefined` for a removed
 * one: nothing can acknowledge a prune of a manifest that is gone).
 */
export function ackOfManifest(
  steps: readonly ManualStep[],
  manifest: IntegrationManifest | undefined,
  mode: ManualStepsMode,
  pr?: AckContext,
  rotation = false,
): ManualAck {
  if (mode === 'trust') return { status: 'trusted' };
  if (!manifest) return { status: 'awaiting', reason: 'no manifest to acknowledge it in: restore it with "govops/delete": "true" and the acknowledgment' };
  const phases = [...new Set(steps.map((s) => ackPhaseOf(s.phase)))];
  const tokenOf = (phase: Acknowledgment['phase']): string => manualStepToken(phase, manifest.spec.type, manifest.spec.config);
  const expected: Acknowledgment[] = phases.map((phase) => ({ phase, token: tokenOf(phase) }));
  const given = parseAcknowledgments(manifest.metadata.annotations?.[MANUAL_STEP_ANNOTATION]);
  const holds = (e: Acknowledgment): boolean => given.some((g) => g.phase === e.phase && g.token === e.token);
  const line = acknowledgmentLine(expected);
  if (expected.every(holds)) return fromPullRequest({ status: 'acknowledged', annotation: line }, expected, pr);
  // A change of credentials only: a script run for the configuration as it is (create or edit) covers it, as the plan
  // reads it (src/plan/manual-steps.ts: the token leaves secrets out, and a rotation asks for no new script)
  const prepared = rotation ? (['create', 'edit'] as const).map((phase) => ({ phase, token: tokenOf(phase) })).find(holds) : undefined;
  if (prepared) return fromPullRequest({ status: 'acknowledged', annotation: acknowledgmentLine([prepared]) }, [prepared], pr);
  const reason = given.length === 0
    ? `the manifest has no ${MANUAL_STEP_ANNOTATION} annotation`
    : given.some((g) => expected.some((e) => e.phase === g.phase))
      ? 'the annotation acknowledges a script run for another configuration (it changed since)'
      : 'the annotation acknowledges another step';
  return { status: 'awaiting', annotation: line, reason };
}
