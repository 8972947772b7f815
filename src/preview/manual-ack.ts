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

export function ackOfGate(gate: ManualStepGate): ManualAck {
  const ack: ManualAck = { status: gate.status };
  if (gate.acknowledgment) ack.annotation = gate.acknowledgment.line;
  if (gate.reason !== undefined) ack.reason = gate.reason;
  return ack;
}

/**
 * Offline: the acknowledgment the steps need, from the manifest that will carry it (`undefined` for a removed
 * one: nothing can acknowledge a prune of a manifest that is gone).
 */
export function ackOfManifest(steps: readonly ManualStep[], manifest: IntegrationManifest | undefined, mode: ManualStepsMode): ManualAck {
  if (mode === 'trust') return { status: 'trusted' };
  if (!manifest) return { status: 'awaiting', reason: 'no manifest to acknowledge it in: restore it with "govops/delete": "true" and the acknowledgment' };
  const phases = [...new Set(steps.map((s) => ackPhaseOf(s.phase)))];
  const expected: Acknowledgment[] = phases.map((phase) => ({ phase, token: manualStepToken(phase, manifest.spec.type, manifest.spec.config) }));
  const given = parseAcknowledgments(manifest.metadata.annotations?.[MANUAL_STEP_ANNOTATION]);
  const line = acknowledgmentLine(expected);
  if (expected.every((e) => given.some((g) => g.phase === e.phase && g.token === e.token))) return { status: 'acknowledged', annotation: line };
  const reason = given.length === 0
    ? `the manifest has no ${MANUAL_STEP_ANNOTATION} annotation`
    : given.some((g) => expected.some((e) => e.phase === g.phase))
      ? 'the annotation acknowledges a script run for another configuration (it changed since)'
      : 'the annotation acknowledges another step';
  return { status: 'awaiting', annotation: line, reason };
}
