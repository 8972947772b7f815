/**
 * Saved plans (`govops plan --out FILE`, `govops apply FILE`; after Terraform `plan -out` / `apply PLANFILE`).
 *
 * The file is versioned JSON: the plan, the options it was computed with, the manifest paths and revision, and
 * the facts it was computed from (src/plan/facts.ts: keyed fingerprints of every manifest, every secret value,
 * the state entries and the live resources it touches). It never holds a secret value: the plan holds none, the
 * facts are fingerprints (never redacted: govops reads them back), and the plan's text passes the one redactor
 * before it is written (mode 0600).
 *
 * Terraform stores the configuration in its plan file; govops does not, because the configuration holds secret
 * references whose values must not be stored. `apply FILE` reads the manifests again from the same paths and
 * resolves their secrets again, then, under the state lock and before any write, computes the same facts and the
 * same plan with the same options: any difference refuses the apply, naming what changed.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ErrorCode, UserError } from '../errors.js';
import type { PlanFacts } from '../plan/facts.js';
import type { Plan, PlanOptions } from '../plan/types.js';
import { STDIN_PATH } from '../manifests/stream.js';
import { isPlainObject } from '../util/object.js';
import { redactJsonValue } from '../util/redact.js';

export const SAVED_PLAN_KIND = 'GovopsSavedPlan';
/**
 * 2: the plan's `blocked`, `reasons` and `warnings` are `{code, message}` values (src/plan/notes.ts). A file of
 * format 1 holds them as text, from which no code can be told without reading the text back: it is refused.
 */
export const SAVED_PLAN_VERSION = 2;

/** The plan options a saved plan fixes (apply FILE takes none of its own): the planner's options, as given to it. */
export type SavedPlanOptions = PlanOptions;

export interface SavedPlan {
  kind: typeof SAVED_PLAN_KIND;
  formatVersion: typeof SAVED_PLAN_VERSION;
  createdAt: string;
  /**
   * The govops that made it (package version). `apply FILE` refuses a plan made by another version: the plan is computed
   * again and compared by what decides each change (src/plan/facts.ts `comparePlans`), not by its values, and the values
   * a version fills in (defaults, normalisation) are not in the facts. Absent in files of govops before it was recorded.
   */
  govopsVersion?: string;
  /**
   * The service it was planned against: the base URL as requests use it (origin and path; no userinfo, no query).
   * `apply FILE` refuses another: a plan of creates made against staging would otherwise be carried out in prod
   * (nothing live there differs from what the plan read: no resource by those names). Absent in older files.
   */
  service?: string;
  /** The manifests' revision (git HEAD of the manifests, or --revision), when known. */
  revision?: string;
  /** Manifest paths as given to `plan`, relative to the folder it ran in. */
  paths: string[];
  options: SavedPlanOptions;
  facts: PlanFacts;
  plan: Plan;
}

export function savedPlan(input: Omit<SavedPlan, 'kind' | 'formatVersion' | 'createdAt'>, now = new Date()): SavedPlan {
  const out: SavedPlan = {
    kind: SAVED_PLAN_KIND,
    formatVersion: SAVED_PLAN_VERSION,
    ...(input.govopsVersion !== undefined ? { govopsVersion: input.govopsVersion } : {}),
    ...(input.service !== undefined ? { service: input.service } : {}),
    createdAt: now.toISOString(),
    paths: input.paths,
    options: input.options,
    facts: input.facts,
    plan: input.plan,
  };
  if (input.revision !== undefined) out.revision = input.revision;
  return out;
}

/** Write atomically (temp file, rename), readable by its owner only; the plan's values through the redactor. */
export async function writeSavedPlan(file: string, plan: SavedPlan): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.writeFile(tmp, `${JSON.stringify({ ...plan, plan: redactJsonValue(plan.plan) }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw new UserError(`cannot write the plan to ${file}: ${(err as Error).message}`, 'check the --out path', { code: ErrorCode.io });
  }
}

const ACTIONS: ReadonlySet<unknown> = new Set(['create', 'update', 'replace', 'delete', 'adopt', 'settle', 'noop']);
const KINDS: ReadonlySet<unknown> = new Set(['Integration', 'Webhook', 'DataSource']);
const isString = (v: unknown): v is string => typeof v === 'string';
const optional = (v: unknown, is: (v: unknown) => boolean): boolean => v === undefined || is(v);
const recordOf = (v: unknown, is: (v: unknown) => boolean): boolean => isPlainObject(v) && Object.values(v).every(is);

/**
 * A change as the check reads it (facts.ts `gist`, `changeKey`): a file edited by hand is refused as such, not with a
 * JavaScript error from deep in the comparison.
 */
function wellFormedChange(c: unknown): boolean {
  return (
    isPlainObject(c) &&
    KINDS.has(c.resourceKind) &&
    isString(c.name) &&
    ACTIONS.has(c.action) &&
    typeof c.adopt === 'boolean' &&
    optional(c.liveId, isString) &&
    optional(c.renamedFrom, isString) &&
    optional(c.duplicateOf, isString) &&
    Array.isArray(c.changes) &&
    c.changes.every((f) => isPlainObject(f) && isString(f.path))
  );
}

function wellFormedFacts(f: Record<string, unknown>): boolean {
  return (
    recordOf(f.manifests, isString) &&
    recordOf(f.secrets, (v) => recordOf(v, isString)) &&
    recordOf(f.state, (v) => v === null || isString(v)) &&
    recordOf(f.live, (v) => isPlainObject(v) && optional(v.id, isString) && optional(v.fields, (x) => recordOf(x, isString)))
  );
}

function invalid(file: string, why: string): UserError {
  return new UserError(`${file} is not a govops saved plan: ${why}`, 'make one with govops plan --out FILE', { code: ErrorCode.userError });
}

/** Read and check a saved plan file. */
export async function readSavedPlan(file: string): Promise<SavedPlan> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read the saved plan ${file}: ${(err as Error).message}`, undefined, { code: ErrorCode.io });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw invalid(file, 'not JSON');
  }
  if (!isPlainObject(data) || data.kind !== SAVED_PLAN_KIND) throw invalid(file, `no "kind": "${SAVED_PLAN_KIND}"`);
  if (data.formatVersion === 1) {
    throw new UserError(
      `${file} is a saved plan of format 1, made by an older govops; this govops applies format ${SAVED_PLAN_VERSION} only (its plans say why a change is blocked as codes), so nothing was applied`,
      'plan again with this govops (govops plan --out FILE), review, and apply the new plan',
      { code: ErrorCode.userError },
    );
  }
  if (data.formatVersion !== SAVED_PLAN_VERSION) {
    throw new UserError(
      `${file} is a saved plan of format ${JSON.stringify(data.formatVersion)}; this govops applies format ${SAVED_PLAN_VERSION}`,
      'plan again with this govops',
      { code: ErrorCode.userError },
    );
  }
  const plan = data.plan;
  const facts = data.facts;
  if (!isPlainObject(plan) || !Array.isArray(plan.changes) || !Array.isArray(plan.errors)) throw invalid(file, 'no plan');
  const bad = plan.changes.findIndex((c) => !wellFormedChange(c));
  if (bad >= 0) throw invalid(file, `change ${bad + 1} of the plan is malformed (edited?)`);
  if (!isPlainObject(facts) || typeof facts.keyId !== 'string' || !isPlainObject(facts.manifests) || !isPlainObject(facts.live) || !isPlainObject(facts.state) || !isPlainObject(facts.secrets)) {
    throw invalid(file, 'no facts');
  }
  if (!wellFormedFacts(facts)) throw invalid(file, 'its facts are malformed (edited?)');
  if (!Array.isArray(data.paths) || !data.paths.every((p) => typeof p === 'string')) throw invalid(file, 'no paths');
  if (!isPlainObject(data.options)) throw invalid(file, 'no options');
  if (data.revision !== undefined && typeof data.revision !== 'string') throw invalid(file, 'revision must be a string');
  if (data.govopsVersion !== undefined && typeof data.govopsVersion !== 'string') throw invalid(file, 'govopsVersion must be a string');
  if (data.service !== undefined && typeof data.service !== 'string') throw invalid(file, 'service must be a string');
  return data as unknown as SavedPlan;
}

/** A file named so is manifests to `apply`, never a saved plan (`plan --out` refuses such a name). */
export const isManifestFileName = (file: string): boolean => /\.ya?ml$/i.test(file);

/**
 * A CLI argument is a saved plan rather than manifests: one existing file that is not `*.yaml` / `*.yml`, nor `-`
 * (standard input, whatever the folder holds: a file named `-` was applied instead of the stream piped in).
 */
export async function looksLikeSavedPlan(args: readonly string[]): Promise<boolean> {
  if (args.length !== 1 || args[0] === STDIN_PATH || isManifestFileName(args[0]!)) return false;
  try {
    return (await fs.stat(args[0]!)).isFile();
  } catch {
    return false;
  }
}
