/**
 * The manual-step tokens (sha256; src/plan/acknowledgment.ts says what an acknowledgment is), computed in the shell
 * from the manifests as written and carried on the desired integrations, so the plan core needs no hashing.
 */
import { hash } from 'node:crypto';
import { SECRET_KEYS, type IntegrationType } from '../kinds/registry.js';
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
  return hash('sha256', text, 'hex').slice(0, 8);
}

/**
 * Tokens and acknowledgments of an Integration manifest as written (secret references not resolved). The tokens
 * are computed on first read: a plan reads them only for a change that needs a manual step, so a plan of 10,000
 * integrations in sync hashes none (it hashed four per integration). The manifest is not changed once loaded.
 */
export function manualStepFacts(manifest: IntegrationManifest): ManualStepFacts {
  const { type, config } = manifest.spec;
  let tokens: Record<AckPhase, string> | undefined;
  const compute = (): Record<AckPhase, string> => {
    // the non-secret config once for every phase
    const configJson = JSON.stringify(nonSecret(config ?? {}));
    return Object.fromEntries(ACK_PHASES.map((p) => [p, tokenOf(p, type, configJson)])) as Record<AckPhase, string>;
  };
  return {
    get tokens() {
      return (tokens ??= compute());
    },
    acknowledged: parseAcknowledgments(manifest.metadata.annotations?.[MANUAL_STEP_ANNOTATION]),
  };
}

/** A desired integration with the manual-step facts of its manifest as written (`raw`, references unresolved). */
export function withManualStep<D extends { kind: string; manualStep?: ManualStepFacts }>(desired: D, raw: Manifest): D {
  if (desired.kind === 'Integration' && raw.kind === 'Integration') desired.manualStep = manualStepFacts(raw);
  return desired;
}
