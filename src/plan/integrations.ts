/** Planning one integration (pure): compare the desired body with the matched live integration. */
import type { LiveIntegration } from '../api/types.js';
import { withDefaults } from '../manifests/schemas.js';
import {
  ERROR_STATUSES,
  NON_EDITABLE,
  SCRIPT_KINDS,
  deletePayloadRequired,
  isSensitiveKey,
  type IntegrationType,
} from '../service/kinds.js';
import type { ManagedResource } from '../state/types.js';
import { diffObjects, type DiffContext } from './diff.js';
import type { Match } from './match.js';
import type { DesiredIntegration, FieldChange, PlanOptions, ResourceChange } from './types.js';

/** The config govops compares with live: the manifest's config with every schema default filled in. */
export function desiredConfig(d: DesiredIntegration): Record<string, unknown> {
  let c = defaulted.get(d);
  if (!c) {
    c = withDefaults(d.body.type, d.body.config);
    defaulted.set(d, c);
  }
  return c;
}
/** Computed once per desired resource per process (matching and diffing both need it); never mutated. */
const defaulted = new WeakMap<DesiredIntegration, Record<string, unknown>>();

export function secretContext(
  type: IntegrationType,
  secretPaths: readonly string[],
  fingerprints: Record<string, string>,
  state: ManagedResource | undefined,
): DiffContext {
  const secrets = new Set(secretPaths);
  const nonEditable = NON_EDITABLE[type];
  return {
    isSensitive: (path, key) => secrets.has(path) || isSensitiveKey(key),
    secretChanged: (path, live, desired) => {
      if (typeof live === 'string' && live !== '********') return live !== desired;
      const recorded = state?.secretFingerprints[path];
      return recorded === undefined || recorded !== fingerprints[path];
    },
    forcesReplace: (path) => nonEditable.some((p) => path === p || path.startsWith(`${p}.`)),
  };
}

export function diffIntegration(d: DesiredIntegration, live: LiveIntegration, state?: ManagedResource): FieldChange[] {
  const ctx = secretContext(d.body.type, d.secretPaths, d.fingerprints, state);
  const changes: FieldChange[] = [];
  if (live.type !== d.body.type) {
    changes.push({ path: 'type', before: live.type, after: d.body.type, sensitive: false, forcesReplace: true });
    return changes;
  }
  if (d.body.autoBootstrap !== undefined && d.body.type !== 'distributed_sql' && live.autoBootstrap !== d.body.autoBootstrap) {
    changes.push({
      path: 'autoBootstrap',
      before: live.autoBootstrap,
      after: d.body.autoBootstrap,
      sensitive: false,
      forcesReplace: ctx.forcesReplace('autoBootstrap'),
    });
  }
  // distributed_sql is created with only `type`: nothing else to compare
  if (d.body.type !== 'distributed_sql') diffObjects('config', desiredConfig(d), live.config ?? {}, ctx, changes);
  return changes;
}

/** Every attribute of a new integration, as `+` changes (secrets as sensitive). */
export function creationFields(d: DesiredIntegration): FieldChange[] {
  const ctx = { ...secretContext(d.body.type, d.secretPaths, d.fingerprints, undefined), secretChanged: () => true };
  const out: FieldChange[] = [{ path: 'type', after: d.body.type, sensitive: false, forcesReplace: false }];
  if (d.body.autoBootstrap !== undefined) {
    out.push({ path: 'autoBootstrap', after: d.body.autoBootstrap, sensitive: false, forcesReplace: false });
  }
  if (d.body.type !== 'distributed_sql') diffObjects('config', desiredConfig(d), {}, { ...ctx, forcesReplace: () => false }, out);
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
  if (m.live) c.liveId = m.live.id;
  if (m.renamedFrom) c.renamedFrom = m.renamedFrom;
  return c;
}

export function planIntegration(d: DesiredIntegration, m: Match<LiveIntegration>, options: PlanOptions): ResourceChange {
  const c = base(d, m);
  const live = m.live;
  if (d.deleteRequested) return planRequestedDelete(c, d, m, options);
  if (!live) {
    c.action = 'create';
    c.adopt = false;
    c.changes = creationFields(d);
    const script = manualScriptFor(d.name, d.body.type, d.body.autoBootstrap, 'create');
    if (script) c.manualScript = script;
    return c;
  }
  c.changes = diffIntegration(d, live, m.adopt ? undefined : m.state);
  const forced = c.changes.filter((f) => f.forcesReplace);
  if (forced.length > 0) {
    c.action = 'replace';
    c.reasons.push(`${forced.map((f) => f.path).join(', ')} cannot be changed in place: replace (delete + create)`);
    if (deletePayloadRequired(live.type, live.autoBootstrap)) c.deleteNeedsCredentials = true;
    if (!options.allowReplace) {
      c.blocked = `replace needed (${forced.map((f) => f.path).join(', ')} not editable): run with --allow-replace`;
    } else if (deletePayloadRequired(live.type, live.autoBootstrap) && !d.deleteCredentials) {
      c.blocked = `the delete half of the replace needs spec.deleteCredentials (created with autoBootstrap true)`;
    }
    const script = manualScriptFor(d.name, d.body.type, d.body.autoBootstrap, 'create');
    if (script) c.manualScript = script;
    return c;
  }
  if (ERROR_STATUSES.has(live.status) && live.status !== 'deleteError') {
    c.reasons.push(`status ${live.status}: fixed by PUT`);
  }
  if (c.changes.length > 0 || (ERROR_STATUSES.has(live.status) && live.status !== 'deleteError')) {
    c.action = 'update';
    const script = manualScriptFor(d.name, d.body.type, d.body.autoBootstrap, 'edit');
    if (script) c.manualScript = script;
    return c;
  }
  c.action = m.adopt ? 'adopt' : 'noop';
  return c;
}

function planRequestedDelete(
  c: ResourceChange,
  d: DesiredIntegration,
  m: Match<LiveIntegration>,
  options: PlanOptions,
): ResourceChange {
  c.reasons.push(`annotation govops/delete: "true"`);
  if (!m.live) {
    if (m.state && options.prune) {
      c.action = 'delete';
      c.goneFromService = true;
      c.reasons.push('already gone from the service: only the state entry is removed');
    }
    return c;
  }
  if (m.adopt || !m.state) {
    c.adopt = false;
    c.reasons.push('not owned by govops (not in state): never deleted');
    return c;
  }
  if (!options.prune) {
    c.reasons.push('run with --prune to delete it');
    return c;
  }
  c.action = 'delete';
  c.adopt = false;
  if (deletePayloadRequired(m.live.type, m.live.autoBootstrap)) c.deleteNeedsCredentials = true;
  if (c.deleteNeedsCredentials && !d.deleteCredentials) {
    c.blocked = 'the delete needs spec.deleteCredentials (created with autoBootstrap true)';
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
  const type = (live?.type ?? st.type) as IntegrationType;
  const c: ResourceChange = {
    resourceKind: 'Integration',
    name: st.name,
    action: 'delete',
    adopt: false,
    integrationType: type,
    changes: [],
    reasons: ['no manifest any more (--prune)'],
  };
  if (!live) {
    c.goneFromService = true;
    c.reasons.push('already gone from the service: only the state entry is removed');
    return c;
  }
  c.liveId = live.id;
  const autoBootstrap = live.autoBootstrap ?? st.autoBootstrap ?? false;
  if (deletePayloadRequired(type, autoBootstrap)) {
    c.deleteNeedsCredentials = true;
    c.blocked =
      `cannot prune: created with autoBootstrap true, so the delete needs the 2.9 credentials, which only a ` +
      `manifest can give. Restore the manifest with metadata.annotations "govops/delete": "true" and ` +
      `spec.deleteCredentials, apply with --prune, then remove it`;
  }
  const script = manualScriptFor(st.name, type, autoBootstrap, 'delete');
  if (script) c.manualScript = script;
  return c;
}
