/**
 * The manual flow (autoBootstrap false) as content: for each touched integration whose kind has scripts,
 * the scripts the platform admin must run before merging applies it, fetched from the script endpoints
 * (per phase: initial-create + create, edit, delete). Secret references are sent as placeholders
 * (`<secret fromEnv: DB_PASSWORD>`), never as values: a script may echo what it is given, and the comment
 * is read by everyone who can read the pull request.
 */
import type { ServiceApi } from '../api/client-types.js';
import type { IntegrationBody } from '../api/types.js';
import { ApiError, TransportError } from '../errors.js';
import { describeRef, isSecretRef } from '../manifests/secrets.js';
import { isPlainObject } from '../util/object.js';
import { SCRIPT_PHASES_WITH_ID, type ScriptPhase } from '../service/kinds.js';
import { SCRIPT_KINDS, type IntegrationType } from '../kinds/registry.js';
import type { LiveAction, ManualStep } from './types.js';

/** The script phases merging needs for an action (empty when the kind has none or autoBootstrap is true). */
export function manualPhases(action: LiveAction, type: IntegrationType, autoBootstrap: boolean | undefined): ScriptPhase[] {
  if (autoBootstrap !== false) return [];
  const create: ScriptPhase[] = SCRIPT_KINDS['initial-create'].has(type) ? ['initial-create', 'create'] : ['create'];
  const phases: ScriptPhase[] =
    action === 'create' ? create : action === 'update' ? ['edit'] : action === 'delete' ? ['delete'] : action === 'replace' ? ['delete', ...create] : [];
  return phases.filter((p) => SCRIPT_KINDS[p].has(type));
}

/** A copy of a manifest value with every secret reference replaced by a placeholder naming it. */
export function withPlaceholders(value: unknown): unknown {
  if (isSecretRef(value)) return `<secret ${describeRef(value)}>`;
  if (Array.isArray(value)) return value.map(withPlaceholders);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPlaceholders(v)]));
  return value;
}

/** Language hint for a script's code block: its shebang, else SQL (every kind with scripts is a SQL platform). */
export function scriptLanguage(script: string): string {
  const shebang = /^#!\s*(?:\/usr\/bin\/env\s+)?(?:\S*\/)?(\w+)/.exec(script);
  if (shebang) return shebang[1] === 'sh' ? 'sh' : shebang[1]!;
  return 'sql';
}

export interface ManualStepInput {
  name: string;
  action: LiveAction;
  type: IntegrationType;
  autoBootstrap: boolean | undefined;
  /** The manifest's config with its references (unresolved); absent for a removal. */
  config?: Record<string, unknown>;
  liveId?: string;
  /** The steps the plan's manual-step gate names (src/plan/manual-steps.ts), used instead of `manualPhases`. */
  steps?: ReadonlyArray<{ phase: ScriptPhase; command: string }>;
}

const commandFor = (name: string, phase: ScriptPhase): string => `govops scripts ${name} --phase ${phase}`;

/** The steps without their scripts (offline, or before fetching). */
export function manualSteps(input: ManualStepInput, note?: string): ManualStep[] {
  const steps = input.steps ?? manualPhases(input.action, input.type, input.autoBootstrap).map((phase) => ({ phase, command: commandFor(input.name, phase) }));
  return steps.map(({ phase, command }) => ({ phase, command, ...(note !== undefined ? { note } : {}) }));
}

/** Fetch each step's script; a failure is recorded in the step, never thrown. */
export async function fetchManualSteps(api: ServiceApi, input: ManualStepInput, redact: (s: string) => string): Promise<ManualStep[]> {
  const body: IntegrationBody = { type: input.type, autoBootstrap: false, config: (withPlaceholders(input.config ?? {}) as Record<string, unknown>) };
  const out: ManualStep[] = [];
  for (const step of manualSteps(input)) {
    const needsId = SCRIPT_PHASES_WITH_ID.has(step.phase);
    if (needsId && input.liveId === undefined) {
      out.push({ ...step, note: 'the integration does not exist in the service yet: its script is fetched once it does' });
      continue;
    }
    if (step.phase !== 'delete' && input.config === undefined) {
      out.push({ ...step, note: 'no manifest to generate it from' });
      continue;
    }
    try {
      const script = redact(await api.generateScript(step.phase, needsId ? { id: input.liveId!, body } : { body }));
      out.push({ ...step, script, language: scriptLanguage(script) });
    } catch (err) {
      if (!(err instanceof ApiError || err instanceof TransportError)) throw err;
      const why = err instanceof ApiError ? `${err.statusCode} ${err.error}: ${err.message}` : `cannot reach the service: ${err.message}`;
      out.push({ ...step, note: redact(`the service did not generate it: ${why}`) });
    }
  }
  return out;
}
