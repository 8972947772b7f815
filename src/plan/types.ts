/**
 * The plan: a plain value (serialisable to JSON) computed by a pure function of
 * (manifests, live state, govops state, options). Printing and applying it are separate steps.
 */
import type { IntegrationType } from '../service/kinds.js';

export type ActionKind = 'create' | 'update' | 'replace' | 'delete' | 'adopt' | 'noop';

export interface FieldChange {
  /** Dotted path, e.g. `config.port` or `notificationType`. */
  path: string;
  /** Omitted when sensitive. */
  before?: unknown;
  after?: unknown;
  /** Values are secrets: shown as `(sensitive)`. */
  sensitive: boolean;
  /** The attribute is not editable in the service: the change needs a replace. */
  forcesReplace: boolean;
}

export interface ResourceChange {
  resourceKind: 'Integration' | 'Webhook';
  /** metadata.name, or for a prune candidate the name recorded in state. */
  name: string;
  action: ActionKind;
  /** Adopted resources are also updated when they differ (`adopt` + changes). */
  adopt: boolean;
  /** Live id, when the resource exists. */
  liveId?: string;
  integrationType?: IntegrationType;
  changes: FieldChange[];
  /** Why this action (e.g. `status createError: fixed by PUT`, `config.host is not editable`). */
  reasons: string[];
  /** Set when the action cannot be carried out as planned (missing deleteCredentials, replace not allowed...). */
  blocked?: string;
  /** Manual flow: the script the user must run in the platform first. */
  manualScript?: { phase: string; command: string };
  /** Where the manifest is (absent for deletes). */
  source?: { file: string; line: number; column: number };
}

export interface PlanSummary {
  create: number;
  update: number;
  replace: number;
  delete: number;
  adopt: number;
  noop: number;
}

export interface Plan {
  /** Format version of the JSON output. */
  formatVersion: 1;
  revision?: string;
  changes: ResourceChange[];
  summary: PlanSummary;
  /** Plan-level errors (e.g. two live matches for one manifest). A plan with errors is not applied. */
  errors: string[];
  warnings: string[];
}

export function hasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => c.action !== 'noop' || c.adopt);
}
