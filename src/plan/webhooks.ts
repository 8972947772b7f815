/**
 * Planning one webhook (pure). Webhooks have no update endpoint: any difference is a replace
 * (delete + create), which is planned without --allow-replace since it is the only way (documented).
 */
import type { LiveWebhook } from '../api/types.js';
import { carriesCredential, pathCarriesToken, webhookUrlCarriesCredential } from '../service/kinds.js';
import { WEBHOOK_FIELD_NAMES, comparableWebhookField, webhookFieldRule } from '../service/webhook-fields.js';
import type { ManagedResource } from '../state/types.js';
import { copyPlain } from '../util/copy.js';
import { deepEqual } from './diff.js';
import type { Match } from './match.js';
import { blocked, reason } from './notes.js';
import type { DesiredWebhook, FieldChange, PlanOptions, ResourceChange } from './types.js';


export interface WebhookDiff {
  changes: FieldChange[];
  /** `['secret']` when the secret cannot be compared (write-only in the service, no fingerprint in state). */
  notComparable: string[];
}

export function diffWebhook(d: DesiredWebhook, live: LiveWebhook, state: ManagedResource | undefined, adopt: boolean): WebhookDiff {
  const changes: FieldChange[] = [];
  const notComparable: string[] = [];
  const ignored = new Set(d.ignoreFields ?? []);
  const plain = (path: string, before: unknown, after: unknown): void => {
    if (ignored.has(path)) return; // govops/ignore-fields: never compared
    if (deepEqual(before, after)) return;
    // A live value carrying a credential (a url with `?token=` or userinfo, a chat webhook's url with
    // its token in the path: the service shows it in clear) is never shown: a manifest matching another team's webhook
    // by name would print it in the preview.
    if (typeof before === 'string' && (carriesCredential(before) || (path === 'url' && (webhookUrlCarriesCredential(before) || pathCarriesToken(before))))) {
      changes.push({ path, sensitive: true, forcesReplace: true });
    }
    else changes.push({ path, before, after, sensitive: false, forcesReplace: true });
  };
  // Every compared field, from its one list (service/webhook-fields.ts).
  for (const f of WEBHOOK_FIELD_NAMES) {
    const rule = webhookFieldRule(f);
    const before = (live as unknown as Record<string, unknown>)[f];
    const after = (d.body as unknown as Record<string, unknown>)[f];
    if (rule.optional && (before === null || before === undefined)) continue; // the service did not say
    if (ignored.has(f) || deepEqual(comparableWebhookField(rule, before), comparableWebhookField(rule, after))) continue;
    plain(f, copyPlain(before), copyPlain(after));
  }

  const recorded = state?.secretFingerprints['secret'];
  const wanted = d.body.secret === undefined ? undefined : d.fingerprints['secret'];
  if ((adopt || !state) && wanted !== undefined && recorded === undefined) {
    notComparable.push('secret');
  } else if (recorded !== wanted) {
    changes.push({ path: 'secret', sensitive: true, forcesReplace: true });
  }
  return { changes, notComparable };
}

export function planWebhook(d: DesiredWebhook, m: Match<LiveWebhook>, options: PlanOptions): ResourceChange {
  const c: ResourceChange = {
    resourceKind: 'Webhook',
    name: d.name,
    action: 'noop',
    adopt: m.adopt,
    changes: [],
    reasons: [...m.reasons],
    source: { ...d.source },
  };
  if (d.ignoreFields?.length) c.ignoredFields = [...d.ignoreFields];
  if (m.live) c.liveId = m.live.id;
  if (m.renamedFrom) c.renamedFrom = m.renamedFrom;
  if (d.deleteRequested) {
    c.reasons.push(reason('delete-requested', 'annotation govops/delete: "true"'));
    c.adopt = false;
    if (m.adopt || !m.state) c.reasons.push(reason('not-owned', 'not owned by govops (not in state): never deleted'));
    else if (!options.prune) c.reasons.push(reason('needs-prune', 'run with --prune to delete it'));
    else {
      c.action = 'delete';
      if (!m.live) c.goneFromService = true;
    }
    return c;
  }
  if (!m.live) {
    c.action = 'create';
    c.adopt = false;
    const { secret, ...plain } = d.body;
    for (const [path, after] of Object.entries(plain)) c.changes.push({ path, after: copyPlain(after), sensitive: false, forcesReplace: false });
    if (secret !== undefined) c.changes.push({ path: 'secret', sensitive: true, forcesReplace: false });
    return c;
  }
  const diff = diffWebhook(d, m.live, m.adopt ? undefined : m.state, m.adopt);
  c.changes = diff.changes;
  if (diff.notComparable.length) {
    const handling = c.changes.length > 0 ? 'send' : options.resendSecrets ? 'resend' : 'record';
    c.notComparable = { paths: diff.notComparable, handling };
    if (handling === 'resend') c.reasons.push(reason('resend-secrets', 'secret cannot be compared: re-sent once by a replace (--resend-secrets)'));
  }
  if (c.changes.length > 0 || c.notComparable?.handling === 'resend') {
    c.action = 'replace';
    c.reasons.push(reason('no-update', 'webhooks have no update: replaced (delete + create, new id)'));
    if (m.adopt && !options.allowReplace) {
      c.blocked = blocked('replace-not-allowed', 'adopting it means replacing a webhook govops did not create (it differs): run with --allow-replace');
    }
  } else if (m.adopt) c.action = 'adopt';
  return c;
}

export function planOrphanWebhook(
  st: ManagedResource,
  live: LiveWebhook | undefined,
  options: PlanOptions,
): ResourceChange | undefined {
  if (!options.prune) return undefined;
  const c: ResourceChange = {
    resourceKind: 'Webhook',
    name: st.name,
    action: 'delete',
    adopt: false,
    changes: [],
    reasons: [reason('no-manifest', 'no manifest any more (--prune)')],
  };
  if (live) c.liveId = live.id;
  else {
    c.goneFromService = true;
    c.reasons.push(reason('gone-from-service', 'already gone from the service: only the state entry is removed'));
  }
  return c;
}
