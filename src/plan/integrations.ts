/** Planning one integration (pure): compare the desired body with the matched live integration. */
import type { LiveIntegration } from '../api/types.js';
import { ERROR_STATUSES } from '../service/kinds.js';
import { NON_EDITABLE, SCRIPT_KINDS, deletePayloadRequired, isConfigless, isIntegrationType, isSensitiveKey, type IntegrationType } from '../kinds/registry.js';
import type { ManagedResource } from '../state/types.js';
import { createdFields, diffObjects, sameObjects, sameValue, type DiffContext } from './diff.js';
import { configPaths, withoutPaths } from './ignore.js';
import type { Match } from './match.js';
import { comparable, sameComparable, withShapeDefaults, type ConfigShapes, type Normalise } from './shape.js';
import { blocked, reason, type Blocked } from './notes.js';
import type { DesiredIntegration, FieldChange, PlanOptions, ResourceChange } from './types.js';
import { isPlainObject } from '../util/object.js';
import { withArticle } from '../util/strings.js';

/** What planning an integration needs besides the resource: the injected config shapes and the options. */
export interface PlanContext {
  shapes: ConfigShapes;
  options: PlanOptions;
  /** `comparable` remembered for the plan (shape.ts `comparableMemo`); default: computed each time. */
  normalise?: Normalise;
}

/** A diff context that also lists the hidden plain values it could not compare (see `secretContext`). */
export type IntegrationDiffContext = DiffContext & { hiddenUnknown(): ReadonlySet<string> | undefined };

/**
 * @param state the resource's state entry, or undefined when govops does not own it (adopted, or no state
 *   file): then a hidden secret cannot be compared (`unknown`).
 * @param specHash the desired spec's hash (asked for only when needed: it is computed on first use, desired.ts): a
 *   value the service hides at a field that is no credential (no fingerprint of it is ever recorded) is what govops
 *   sent while the manifest is what it last applied.
 */
export function secretContext(
  type: IntegrationType,
  secretPaths: readonly string[],
  fingerprints: Record<string, string>,
  state: ManagedResource | undefined,
  specHash?: () => string,
): IntegrationDiffContext {
  const secrets = new Set(secretPaths);
  const nonEditable = NON_EDITABLE[type] ?? ['type'];
  // A path that held a secret when govops last applied stays sensitive, whatever the manifest says now: a pull
  // request that turns a reference into a literal must not show the live value it replaces.
  const wasSecret = (path: string) => state !== undefined && Object.hasOwn(state.secretFingerprints, path);
  const isSensitive = (path: string, key: string) => secrets.has(path) || isSensitiveKey(key) || wasSecret(path);
  // (a set: the in-sync walks and the diff may each ask about the same path; made when the first one is found)
  let hidden: Set<string> | undefined;
  return {
    isSensitive,
    // What the service returns for a credential is never compared as a value, whatever it looks like (the
    // interface's mask, `[REDACTED]`, `****`, a value in clear): only the fingerprint govops recorded counts.
    compareSecret: (path, _live, desired) => {
      const recorded = state?.secretFingerprints[path];
      // gone from the manifest: a change only when govops sent one (it would still be in the service)
      if (desired === undefined) return recorded !== undefined ? 'changed' : 'same';
      if (!state) return 'unknown';
      if (!isSensitive(path, path.slice(path.lastIndexOf('.') + 1))) {
        // hidden by the service at a field that is no credential: no fingerprint of it exists
        if (specHash !== undefined && state.specHash === specHash()) return 'same';
        (hidden ??= new Set()).add(path);
        return 'unknown';
      }
      // owned: the fingerprints in state are what govops last sent; a path without one was never sent
      return recorded !== undefined && recorded === fingerprints[path] ? 'same' : 'changed';
    },
    forcesReplace: (path) => nonEditable.some((p) => path === p || path.startsWith(`${p}.`)),
    hiddenUnknown: () => hidden,
  };
}

export interface IntegrationDiff {
  changes: FieldChange[];
  /** Sensitive paths that cannot be compared. */
  notComparable: string[];
}

export function diffIntegration(
  shapes: ConfigShapes,
  d: DesiredIntegration,
  live: LiveIntegration,
  state?: ManagedResource,
  normalise: Normalise = (type, config) => comparable(shapes, type, config),
): IntegrationDiff {
  const base = secretContext(d.body.type, d.secretPaths, d.fingerprints, state, () => d.specHash);
  const ctx = { ...base, notComparable: [] as string[] };
  const changes: FieldChange[] = [];
  if (live.type !== d.body.type) {
    changes.push({ path: 'type', before: live.type, after: d.body.type, sensitive: false, forcesReplace: true });
    return { changes, notComparable: [] };
  }
  if (d.body.autoBootstrap !== undefined && !isConfigless(d.body.type) && live.autoBootstrap !== d.body.autoBootstrap) {
    changes.push({
      path: 'autoBootstrap',
      before: live.autoBootstrap,
      after: d.body.autoBootstrap,
      sensitive: false,
      forcesReplace: ctx.forcesReplace('autoBootstrap'),
    });
  }
  // A configless kind is created with only `type`: nothing else to compare
  if (!isConfigless(d.body.type)) {
    const type = d.body.type;
    // Ignored fields (govops/ignore-fields) are never compared.
    const ignored = configPaths(d.ignoreFields);
    // In sync (most resources of most plans): said by one cheap walk over the shape, without making the
    // comparable configs (with ignored fields: over the comparable configs), unless a secret sits under a key
    // not sensitive by name (then only the full diff knows where secrets are).
    // (a path that held a secret when last applied counts as one: state.ts `secretFingerprints`)
    const sensitiveByName = (p: string) => isSensitiveKey(p.slice(p.lastIndexOf('.') + 1));
    const byName = d.secretPaths.every(sensitiveByName) && (!state || everyKey(state.secretFingerprints, sensitiveByName));
    if (byName && ignored.length === 0 && sameComparable(shapes, type, d.body.config, live.config, 'config', (prefix, key, x, y) => sameLeaf(prefix, key, x, y, ctx))) {
      return { changes, notComparable: ctx.notComparable };
    }
    const want = withoutPaths(normalise(type, d.body.config, false), ignored);
    const have = withoutPaths(normalise(type, live.config, false), ignored);
    if (!byName || !sameObjects('config', want, have, ctx, isSensitiveKey)) diffObjects('config', want, have, ctx, changes);
  }
  // The manifest changed since govops last applied it (another spec hash), nothing visible differs, and the service
  // hides fields that are no credentials: the change is under what it hides. Sent as a change of those fields.
  const hidden = base.hiddenUnknown();
  if (changes.length === 0 && hidden !== undefined) {
    for (const path of hidden) changes.push({ path, sensitive: true, forcesReplace: ctx.forcesReplace(path) });
    return { changes, notComparable: ctx.notComparable.filter((p) => !hidden.has(p)) };
  }
  return { changes, notComparable: ctx.notComparable };
}

/**
 * One normalised field of both sides, as `sameObjects` would see it: a secret (by its key, or masked live) by
 * `compareSecret`, anything else by value. An object, or a value on the live side only, is "not the same"
 * here (the full diff decides).
 */
function sameLeaf(prefix: string, key: string, desired: unknown, live: unknown, ctx: DiffContext): boolean {
  if (desired === undefined || isPlainObject(desired) || isPlainObject(live)) return false;
  return sameValue(prefix, key, desired, live, ctx, isSensitiveKey(key));
}

/** Whether every own key of `o` passes `test` (without making the list of keys: once per integration of a plan). */
function everyKey(o: Record<string, unknown>, test: (key: string) => boolean): boolean {
  for (const k in o) if (Object.hasOwn(o, k) && !test(k)) return false;
  return true;
}

/** Every attribute of a new integration, as `+` changes (secrets as sensitive). */
export function creationFields(shapes: ConfigShapes, d: DesiredIntegration): FieldChange[] {
  const ctx: DiffContext = {
    ...secretContext(d.body.type, d.secretPaths, d.fingerprints, undefined),
    compareSecret: () => 'changed',
    forcesReplace: () => false,
  };
  const out: FieldChange[] = [{ path: 'type', after: d.body.type, sensitive: false, forcesReplace: false }];
  if (d.body.autoBootstrap !== undefined) {
    out.push({ path: 'autoBootstrap', after: d.body.autoBootstrap, sensitive: false, forcesReplace: false });
  }
  // withShapeDefaults makes a private copy: its leaves become the changes' values
  if (!isConfigless(d.body.type)) createdFields('config', withShapeDefaults(shapes, d.body.type, d.body.config), ctx, out);
  return out;
}

/** `govops scripts` command for a manual-flow integration, when its kind has a script for the phase. */
export function manualScriptFor(
  name: string,
  type: IntegrationType,
  autoBootstrap: boolean | undefined,
  phase: 'create' | 'edit' | 'delete',
): ResourceChange['manualScript'] {
  if (autoBootstrap !== false || !SCRIPT_KINDS[phase].has(type)) return undefined;
  if (phase === 'create' && SCRIPT_KINDS['initial-create'].has(type)) {
    return {
      phase: 'initial-create',
      command: `govops scripts ${name} --phase initial-create && govops scripts ${name} --phase create`,
    };
  }
  return { phase, command: `govops scripts ${name} --phase ${phase}` };
}

/**
 * The live integration at a recorded id has a type govops does not know (another team's kind, a later release's,
 * a type renamed by the service): govops cannot tell whether it is the integration it recorded, how it is deleted
 * or what its config means, so it never writes to it. The change is shown (a type change, a delete) and blocked.
 */
function unknownTypeBlock(name: string, live: LiveIntegration): Blocked {
  return blocked(
    'unknown-type',
    `the live integration ${live.id} has type ${JSON.stringify(live.type)}, which govops does not know: govops neither ` +
      `replaces nor deletes it. Delete it in the service if it is not Integration/${name}, or stop managing it ` +
      `(govops state forget Integration/${name})`,
  );
}

function base(d: DesiredIntegration, m: Match<LiveIntegration>): ResourceChange {
  const c: ResourceChange = {
    resourceKind: 'Integration',
    name: d.name,
    action: 'noop',
    adopt: m.adopt,
    integrationType: d.body.type,
    changes: [],
    reasons: [...m.reasons],
    source: { ...d.source },
  };
  if (d.ignoreFields?.length) c.ignoredFields = [...d.ignoreFields];
  if (m.live) c.liveId = m.live.id;
  if (m.renamedFrom) c.renamedFrom = m.renamedFrom;
  return c;
}

export function planIntegration(d: DesiredIntegration, m: Match<LiveIntegration>, pc: PlanContext): ResourceChange {
  const { options } = pc;
  const c = base(d, m);
  const live = m.live;
  if (d.deleteRequested) return planRequestedDelete(c, d, m, options);
  if (!live) {
    c.action = 'create';
    c.adopt = false;
    c.changes = creationFields(pc.shapes, d);
    const script = manualScriptFor(d.name, d.body.type, d.body.autoBootstrap, 'create');
    if (script) c.manualScript = script;
    return c;
  }
  const diff = diffIntegration(pc.shapes, d, live, m.adopt ? undefined : m.state, pc.normalise);
  c.changes = diff.changes;
  if (!isIntegrationType(live.type)) {
    // (matched by its recorded id only: the diff is the type change)
    c.action = 'replace';
    c.reasons.push(reason('not-editable', 'type cannot be changed in place'));
    c.blocked = unknownTypeBlock(d.name, live);
    return c;
  }
  const forced = c.changes.filter((f) => f.forcesReplace);
  if (forced.length > 0) {
    c.action = 'replace';
    if (diff.notComparable.length) c.notComparable = { paths: diff.notComparable, handling: 'send' };
    c.reasons.push(reason('not-editable', `${forced.map((f) => f.path).join(', ')} cannot be changed in place: replace (delete + create)`));
    if (deletePayloadRequired(live.type, live.autoBootstrap)) c.deleteNeedsCredentials = true;
    if (!options.allowReplace) {
      c.blocked = blocked('replace-not-allowed', `replace needed (${forced.map((f) => f.path).join(', ')} not editable): run with --allow-replace`);
    } else if (deletePayloadRequired(live.type, live.autoBootstrap) && !d.deleteCredentials) {
      c.blocked = blocked('needs-delete-credentials', 'the delete half of the replace needs spec.deleteCredentials (created with autoBootstrap true)');
    }
    const script = manualScriptFor(d.name, d.body.type, d.body.autoBootstrap, 'create');
    if (script) c.manualScript = script;
    return c;
  }
  // Every error status is fixed by a PUT, deleteError too: reached here only when the manifest keeps the integration
  // (a delete asked for is planned above), which a failed delete left in deleteError; a no-op would call it in sync.
  const failed = ERROR_STATUSES.has(live.status);
  if (failed) c.reasons.push(reason('fix-status', `status ${live.status}: fixed by PUT`));
  const needsPut = c.changes.length > 0 || failed;
  if (diff.notComparable.length) {
    const handling = needsPut ? 'send' : options.resendSecrets ? 'resend' : 'record';
    c.notComparable = { paths: diff.notComparable, handling };
    if (handling === 'resend') c.reasons.push(reason('resend-secrets', `${diff.notComparable.join(', ')} cannot be compared: re-sent once (--resend-secrets)`));
  }
  if (needsPut || c.notComparable?.handling === 'resend') {
    c.action = 'update';
    const script = manualScriptFor(d.name, d.body.type, d.body.autoBootstrap, 'edit');
    if (script) c.manualScript = script;
    return c;
  }
  if (!m.adopt && m.state !== undefined && SETTLING_STATUSES.has(live.status)) {
    // Owned, nothing differs, but the service is still carrying out a create or an edit govops sent (its answer was
    // lost, or an earlier run's wait ended first): waited for as after govops' own write, so an error status is this
    // run's failure, not a later run's "fix". In sync only once it has settled.
    c.action = 'settle';
    c.reasons.push(reason('settling', `status ${live.status}: waited for until the service settles it (nothing to send)`));
    return c;
  }
  c.action = m.adopt ? 'adopt' : 'noop';
  return c;
}

/**
 * The transitions of an owned integration a plan with nothing else to do waits for (`settle`): a create or an edit.
 * `deleting` is not one (govops did not send that delete: the manifest keeps the integration; the next plan creates it
 * once it is gone).
 */
export const SETTLING_STATUSES: ReadonlySet<string> = new Set(['creating', 'editing']);

function planRequestedDelete(
  c: ResourceChange,
  d: DesiredIntegration,
  m: Match<LiveIntegration>,
  options: PlanOptions,
): ResourceChange {
  c.reasons.push(reason('delete-requested', 'annotation govops/delete: "true"'));
  if (!m.live) {
    if (m.state && options.prune) {
      c.action = 'delete';
      c.goneFromService = true;
      c.reasons.push(reason('gone-from-service', 'already gone from the service: only the state entry is removed'));
    }
    return c;
  }
  if (m.adopt || !m.state) {
    c.adopt = false;
    c.reasons.push(reason('not-owned', 'not owned by govops (not in state): never deleted'));
    return c;
  }
  if (!options.prune) {
    c.reasons.push(reason('needs-prune', 'run with --prune to delete it'));
    return c;
  }
  c.action = 'delete';
  c.adopt = false;
  if (!isIntegrationType(m.live.type)) {
    c.blocked = unknownTypeBlock(d.name, m.live);
    return c;
  }
  if (deletePayloadRequired(m.live.type, m.live.autoBootstrap)) c.deleteNeedsCredentials = true;
  if (c.deleteNeedsCredentials && !d.deleteCredentials) {
    c.blocked = blocked('needs-delete-credentials', 'the delete needs spec.deleteCredentials (created with autoBootstrap true)');
  }
  const script = manualScriptFor(d.name, m.live.type, m.live.autoBootstrap, 'delete');
  if (script) c.manualScript = script;
  return c;
}

/** A state entry without a manifest: deleted only with --prune, only when owned (it is: it is in state). */
export function planOrphanIntegration(
  st: ManagedResource,
  live: LiveIntegration | undefined,
  options: PlanOptions,
): ResourceChange | undefined {
  if (!options.prune) return undefined;
  const liveType = live?.type;
  const type = (isIntegrationType(liveType) ? liveType : st.type) as IntegrationType;
  const c: ResourceChange = {
    resourceKind: 'Integration',
    name: st.name,
    action: 'delete',
    adopt: false,
    integrationType: type,
    changes: [],
    reasons: [reason('no-manifest', 'no manifest any more (--prune)')],
  };
  if (!live) {
    c.goneFromService = true;
    c.reasons.push(reason('gone-from-service', 'already gone from the service: only the state entry is removed'));
    return c;
  }
  c.liveId = live.id;
  if (!isIntegrationType(live.type)) {
    c.blocked = unknownTypeBlock(st.name, live);
    return c;
  }
  const autoBootstrap = live.autoBootstrap ?? st.autoBootstrap ?? false;
  if (deletePayloadRequired(type, autoBootstrap)) {
    c.deleteNeedsCredentials = true;
    c.blocked = blocked(
      'needs-delete-credentials',
      `cannot prune: ${withArticle(type)} integration created with autoBootstrap true is deleted with admin credentials ` +
      `(spec.deleteCredentials), which only its manifest can give. To delete it, put the manifest back with ` +
      `the annotation govops/delete: "true" and spec.deleteCredentials, apply with --prune, then remove the manifest`,
    );
  }
  const script = manualScriptFor(st.name, type, autoBootstrap, 'delete');
  if (script) c.manualScript = script;
  return c;
}
