/**
 * The manual-step tokens (sha256; src/plan/acknowledgment.ts says what an acknowledgment is), computed in the shell
 * from the manifests as written and carried on the desired integrations, so the plan core needs no hashing.
 */
import { createHash } from 'node:crypto';
import { SECRET_KEYS, type IntegrationType } from '../service/kinds.js';
import { isSecretRef } from '../manifests/refs.js';
import type { IntegrationManifest, Manifest } from '../manifests/types.js';
import { ACK_PHASES, MANUAL_STEP_ANNOTATION, parseAcknowledgments, type AckPhase, type ManualStepFacts } from '../plan/acknowledgment.js';

const SECRET = '(secret)';

/** The config with every secret value and reference replaced by one marker (where it is counts, not what). */
function nonSecret(value: unknown, key?: string): unknown {
  if (isSecretRef(value)) return SECRET;
  if (Array.isArray(value)) return value.map((v) => nonSecret(v));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = nonSecret(v, k);
    }
    return out;
  }
  if (key !== undefined && SECRET_KEYS.has(key) && value !== null) return SECRET;
  return value;
}

/**
 * The token of one phase: the first 8 hex digits of sha256 over the phase, the type and the non-secret
 * config, as canonical JSON (keys sorted). Defaults are not filled in: the manifest as written is what
 * `govops scripts --ack` and the plan both see.
 */
export function manualStepToken(phase: AckPhase, type: IntegrationType, config: Record<string, unknown> | undefined): string {
  return tokenOf(phase, type, JSON.stringify(nonSecret(config ?? {})));
}

/** The token from the config's canonical JSON: the same text as JSON.stringify of the array, built once per config. */
function tokenOf(phase: AckPhase, type: IntegrationType, configJson: string): string {
  const text = `[${JSON.stringify('govops/manual-step/v1')},${JSON.stringify(phase)},${JSON.stringify(type)},${configJson}]`;
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Tokens and acknowledgments of an Integration manifest as written (secret references not resolved). */
export function manualStepFacts(manifest: IntegrationManifest): ManualStepFacts {
  const { type, config } = manifest.spec;
  // the non-secret config once for every phase (planning 10,000 integrations walked each config once per phase)
  const configJson = JSON.stringify(nonSecret(config ?? {}));
  const tokens = Object.fromEntries(ACK_PHASES.map((p) => [p, tokenOf(p, type, configJson)])) as Record<AckPhase, string>;
  return { tokens, acknowledged: parseAcknowledgments(manifest.metadata.annotations?.[MANUAL_STEP_ANNOTATION]) };
}

/** A desired integration with the manual-step facts of its manifest as written (`raw`, references unresolved). */
export function withManualStep<D extends { kind: string; manualStep?: ManualStepFacts }>(desired: D, raw: Manifest): D {
  if (desired.kind === 'Integration' && raw.kind === 'Integration') desired.manualStep = manualStepFacts(raw);
  return desired;
}
