/**
 * The manual-flow acknowledgment (`metadata.annotations["govops/manual-step"]`): once an admin has run the
 * platform script of an integration with `autoBootstrap: false`, the manifest records it as `PHASE:TOKEN`,
 * and only then does govops write the change the script prepared.
 *
 * The token is derived offline from the phase and the non-secret part of the manifest's body (type and
 * config; secret values and secret references count only by where they are, never by value or name), so
 * `govops scripts --ack`, `plan`, the daemon and a CI job without secrets all compute the same token, and
 * it changes when the configuration the script was generated for changes. It is never derived from the
 * script text, whose format the interface does not fix. It is an acknowledgment, not a secret: anyone who
 * can read the manifest can compute it, which is the point (the step is explicit and reviewable in Git).
 * This module is pure (the plan core uses it); the hashing is in src/reconcile/manual-step-token.ts.
 */
import { MANUAL_STEP_ANNOTATION } from '../service/annotations.js';
import type { ScriptPhase } from '../service/kinds.js';

export { MANUAL_STEP_ANNOTATION };

/**
 * The phases an acknowledgment names. `initial-create` + `create` are one step (`create`), as are
 * `cleanup` + `post-cleanup` (`cleanup`).
 */
export const ACK_PHASES = ['create', 'edit', 'delete', 'cleanup'] as const;
export type AckPhase = (typeof ACK_PHASES)[number];

export function ackPhaseOf(phase: ScriptPhase): AckPhase {
  if (phase === 'initial-create') return 'create';
  if (phase === 'post-cleanup') return 'cleanup';
  return phase;
}

/** One `PHASE:TOKEN` entry of the annotation. */
export interface Acknowledgment {
  phase: AckPhase;
  token: string;
}

/** What the planner needs to gate a manual-flow change: the tokens of this manifest and what it acknowledges. */
export interface ManualStepFacts {
  /** The token of each phase for the manifest as it is now. */
  tokens: Record<AckPhase, string>;
  /** The entries of the annotation (empty without one). */
  acknowledged: Acknowledgment[];
}

const TOKEN = '[0-9a-f]{8}';
const ENTRY = new RegExp(`^(${ACK_PHASES.join('|')}):(${TOKEN})$`);
/** The annotation's value: one or more `PHASE:TOKEN`, separated by spaces or commas (schemas/manifest.json). */
export const ANNOTATION_PATTERN = `^\\s*(${ACK_PHASES.join('|')}):${TOKEN}([\\s,]+(${ACK_PHASES.join('|')}):${TOKEN})*\\s*$`;

/** Parse the annotation's value; entries that do not parse are left out (validation reports them). */
export function parseAcknowledgments(value: string | undefined): Acknowledgment[] {
  if (typeof value !== 'string') return [];
  const out: Acknowledgment[] = [];
  for (const part of value.split(/[\s,]+/)) {
    const m = ENTRY.exec(part);
    if (m) out.push({ phase: m[1] as AckPhase, token: m[2]! });
  }
  return out;
}

/** The annotation value for a list of acknowledgments (`delete:… create:…`). */
export function acknowledgmentValue(acks: readonly Acknowledgment[]): string {
  return acks.map((a) => `${a.phase}:${a.token}`).join(' ');
}

/** The line to add under `metadata.annotations`, exactly as `govops scripts --ack` prints it. */
export function acknowledgmentLine(acks: readonly Acknowledgment[]): string {
  return `${MANUAL_STEP_ANNOTATION}: "${acknowledgmentValue(acks)}"`;
}
