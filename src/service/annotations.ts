/**
 * govops annotations (`metadata.annotations` of a manifest): their names and the syntax of their values,
 * shared by validation (src/manifests/annotations.ts, errors at file:line:col) and the planner. Pure.
 *
 * - `govops/delete: "true"`: delete the resource (with --prune).
 * - `govops/suspend: "true"`: leave the resource alone (Flux `suspend`): not created, updated, adopted,
 *   renamed or deleted, and never pruned while suspended.
 * - `govops/ignore-fields: "config.audit.enabled, config.workspaces"`: fields another team owns (Argo CD
 *   `ignoreDifferences`): sent on create, never diffed afterwards, kept as they are live when govops
 *   changes the resource.
 */
import { isDestinationKey } from './kinds.js';
import { withArticle } from '../util/strings.js';

export const DELETE_ANNOTATION = 'govops/delete';
export const SUSPEND_ANNOTATION = 'govops/suspend';
export const IGNORE_FIELDS_ANNOTATION = 'govops/ignore-fields';
/** The manual-flow acknowledgment (syntax and checks in src/plan/acknowledgment.ts and the manifest rules). */
export const MANUAL_STEP_ANNOTATION = 'govops/manual-step';
export const GOVOPS_ANNOTATIONS: readonly string[] = [DELETE_ANNOTATION, SUSPEND_ANNOTATION, IGNORE_FIELDS_ANNOTATION, MANUAL_STEP_ANNOTATION];

/**
 * Webhook fields that may be ignored: every field but its identity (`name`), where its events and signatures
 * are sent (`url`: an ignored url would hide a redirection) and its write-only `secret`.
 */
export const WEBHOOK_IGNORABLE: readonly string[] = ['global', 'notificationType', 'actionType'];

/** A boolean annotation is on only when its value is exactly "true" ("false" and absence are off). */
export function annotationOn(annotations: Record<string, string> | undefined, name: string): boolean {
  return annotations?.[name] === 'true';
}

/** The syntax error of a boolean annotation's value, or undefined. */
export function booleanAnnotationProblem(value: unknown): string | undefined {
  return value === 'true' || value === 'false' ? undefined : `must be "true" or "false", got ${JSON.stringify(value)}`;
}

/** The paths of `govops/ignore-fields`: comma-separated, blanks around them ignored, duplicates dropped, sorted. */
export function splitIgnoreFields(value: string | undefined): string[] {
  if (value === undefined) return [];
  return [...new Set(value.split(',').map((p) => p.trim()).filter((p) => p !== ''))].sort();
}

const SEGMENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** What the kinds say about an ignore-fields path: the masked keys, and the natural key fields of the manifest's kind. */
export interface IgnoreFieldFacts {
  isSensitiveKey(key: string): boolean;
  /** The manifest's type and its kind's natural key fields (absent: an unknown type, or not an integration). */
  identity?: { type: string; fields: readonly string[] };
}

/**
 * Why one ignore-fields path is not allowed for a kind (undefined when it is). Integrations: a dotted path
 * inside `config` that is not a credential (the service masks those: govops could not keep the live value),
 * not an identity field of the integration's kind (its natural key fields) and not a field saying where the
 * service connects (`isDestinationKey`: host, workspaceUrl, idpHost, authorityUrl, ...): a plan saying
 * "No changes" must never hide a redirection of the credentials. Webhooks: one of WEBHOOK_IGNORABLE.
 * `facts`: what the kinds say (src/kinds/registry.ts, `ignoreFieldFacts`).
 */
export function ignoreFieldProblem(kind: string, path: string, facts: IgnoreFieldFacts): string | undefined {
  if (kind === 'Webhook') {
    return WEBHOOK_IGNORABLE.includes(path)
      ? undefined
      : `\`${path}\` cannot be ignored on a webhook: use one of ${WEBHOOK_IGNORABLE.join(', ')} (name is its identity, url is where its events and signatures go, the secret is write-only)`;
  }
  const parts = path.split('.');
  if (parts[0] !== 'config' || parts.length < 2) {
    return `\`${path}\` cannot be ignored: name a field inside config, e.g. config.port (type and autoBootstrap are always compared)`;
  }
  if (!parts.slice(1).every((p) => SEGMENT.test(p))) return `\`${path}\` is not a dotted field path such as config.audit.enabled`;
  const secret = parts.slice(1).find((p) => facts.isSensitiveKey(p));
  if (secret) {
    return `\`${path}\` is a credential: the service masks it, so govops could not keep another team's value; manage it in the manifest`;
  }
  if (facts.identity && parts.length === 2 && facts.identity.fields.includes(parts[1]!)) {
    return `\`${path}\` is the identity of ${withArticle(facts.identity.type)} integration (its natural key): it cannot be ignored`;
  }
  const destination = parts.slice(1).find((p) => isDestinationKey(p));
  if (destination) {
    return `\`${path}\` says where the service connects, and so where the credentials are sent: it cannot be ignored (a changed ${destination} must show in the plan)`;
  }
  return undefined;
}
