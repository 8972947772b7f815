/** What `govops webhooks history|retry|events|list` do (loaded only when they run; declared in webhooks.ts). */
import type { Command } from 'commander';
import type { ServiceApi } from '../../api/client-types.js';
import type { LiveWebhook, WebhookHistoryQuery, WebhookHistoryRecord } from '../../api/types.js';
import { DEFAULT_PAGE_SIZE, readHistory, type ReadStats } from '../../deliveries/reader.js';
import { failedDeliveries } from '../../deliveries/records.js';
import { cell, recordTable, retryTable, table } from '../../deliveries/render.js';
import { printableJson } from '../../util/terminal.js';
import { RETRY_FORBIDDEN_HINT, retryDeliveries, retryStopReason, uniqueIds, type RetryOutcome } from '../../deliveries/retry.js';
import { ApiError, TransportError, UserError, classify } from '../../errors.js';
import { loadManifests } from '../../manifests/loader.js';
import type { LoadedManifest } from '../../manifests/types.js';
import { WEBHOOK_ACTIONS } from '../../service/events.js';
import { webhookServiceName } from '../../service/webhook-fields.js';
import { loadState, stateExists } from '../../state/store.js';
import type { GovopsState, ManagedResource } from '../../state/types.js';
import { liveWebhookIdentity } from '../../plan/stale.js';
import { pathCarriesToken, recordedWebhookIdentity, urlWithoutCredential } from '../../service/kinds.js';
import { describeStateLocation } from '../../state/location.js';
import { parseDuration } from '../../util/duration.js';
import { clientFromOptions, type ConnectionFlags } from '../connection.js';
import { contextFrom, EXIT, type CliContext } from '../context.js';
import { parseCount } from '../flags.js';
import { envSwitchOn } from '../boolean-env.js';
import { secretScopeFromFlags } from '../secret-scope.js';
import { stdinStream } from '../stdin.js';
import { firstBy } from '../../util/multimap.js';
import {
  DEFAULT_HISTORY_LIMIT,
  DEFAULT_RETRY_MAX,
  DEFAULT_RETRY_SINCE,
  type HistoryFlags,
  type ListFlags,
  type RetryFlags,
} from './webhooks.js';
import { counted, agree } from '../../util/plural.js';

/** `--since`: a duration back from now (30m, 24h, 7d) or an ISO 8601 time. */
export function parseSince(flag: string, text: string, now: number): number {
  if (/^\d{4}-\d{2}-\d{2}/.test(text.trim())) {
    const t = Date.parse(text.trim());
    if (Number.isNaN(t)) throw new UserError(`${flag}: "${text}" is not a valid ISO 8601 time`, 'e.g. 2026-11-20T08:00:00Z, or a duration such as 24h');
    return t;
  }
  try {
    return now - parseDuration(text);
  } catch (err) {
    throw new UserError(`${flag}: ${(err as Error).message}`, 'a duration back from now (30m, 24h, 7d) or an ISO time (2026-11-20T08:00:00Z)');
  }
}

function json(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * A history record as `-o json` prints it: as the service sent it, but for a webhook url carrying a credential (another
 * team's token in its query, a password in its userinfo), shown without its userinfo and query as `webhooks list` shows
 * every url (`urlWithoutCredential`).
 */
function shownRecord(r: WebhookHistoryRecord): WebhookHistoryRecord {
  return typeof r.url === 'string' && urlWithoutCredential(r.url) !== r.url ? { ...r, url: urlWithoutCredential(r.url) } : r;
}

const wantsJson = (ctx: CliContext): boolean => ctx.options.output === 'json';

/**
 * The webhooks named NAME: live ones and the one recorded in the state. NAME is a name in the service, or the
 * manifest name (metadata.name) govops manages a webhook under, whose name in the service (spec.name) may differ:
 * `names` holds both.
 */
async function webhooksNamed(api: ServiceApi, state: GovopsState, name: string): Promise<{ live: LiveWebhook[]; ids: Set<string>; names: Set<string> }> {
  const all = await api.listWebhooks();
  const entry = state.resources.find((r) => r.kind === 'Webhook' && r.name === name);
  // an entry whose id the service has since given another webhook is not that webhook (managedEntries)
  const recorded = entry && managedEntries({ ...state, resources: [entry] }, all).length === 1 ? entry : undefined;
  const names = new Set([name]);
  const held = recorded ? all.find((w) => w.id === recorded.id) : undefined;
  if (held) names.add(held.name);
  const live = all.filter((w) => names.has(w.name));
  const ids = new Set(live.map((w) => w.id));
  if (recorded && recorded.id !== '') ids.add(recorded.id);
  return { live, ids, names };
}

/**
 * The state a webhooks command reads. One named (--state, GOVOPS_STATE, GOVOPS_STATE_URL) must exist: read as empty, a
 * typo made `retry --failed` say the state "records no webhook govops manages" (hint: pass --state, which was passed),
 * and NAME stand for no manifest name. Without one, the default that does not exist yet means none is managed.
 */
async function namedState(command: Command, location: string, without: string): Promise<GovopsState> {
  if (command.getOptionValueSource('state') !== 'default' && !(await stateExists(location))) {
    throw new UserError(
      `there is no govops state at ${describeStateLocation(location)}`,
      `check --state / GOVOPS_STATE (and --state-key for a PostgreSQL state); leave it out to ${without}`,
    );
  }
  return loadState(location);
}

function fallbackNote(ctx: CliContext): () => void {
  return () => ctx.stderr.write('note: the service refused successOrFailure; filtering by status code here instead\n');
}

// ---- history ------------------------------------------------------------------------------------

export async function historyAction(name: string | undefined, flags: HistoryFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const limit = parseCount('--limit', flags.limit ?? DEFAULT_HISTORY_LIMIT, 1)!;
  const sinceMs = flags.since === undefined ? undefined : parseSince('--since', flags.since, Date.now());
  const filters: WebhookHistoryQuery = { includeGlobal: flags.global, includeUser: flags.personal };
  if (flags.failed) filters.successOrFailure = 'failure';
  if (flags.succeeded) filters.successOrFailure = 'success';
  if (flags.type) filters.notificationType = flags.type;
  const api = clientFromOptions(flags, ctx.logger);
  try {
    let match: ((r: WebhookHistoryRecord) => boolean) | undefined;
    if (name !== undefined) {
      // The interface has no webhook filter: records are matched here, by webhook id or name (a
      // replaced webhook has a new id, its old records keep the name).
      const { live, ids, names } = await webhooksNamed(api, await namedState(command, flags.state, 'match NAME against no state'), name);
      if (live.length === 0) ctx.stderr.write(`note: no live webhook is named "${name}"; showing records that carry that name\n`);
      match = (r) => names.has(r.webhookName) || (r.webhookId !== '' && ids.has(r.webhookId));
    }
    const stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false };
    const records: WebhookHistoryRecord[] = [];
    const pageSize = match ? DEFAULT_PAGE_SIZE : Math.min(limit, DEFAULT_PAGE_SIZE);
    for await (const r of readHistory(api, { filters, pageSize, limit, sinceMs, match, onFilterFallback: fallbackNote(ctx) }, stats)) {
      records.push(r);
    }
    // The service's count is of the records its filters select: not of one webhook's (NAME, matched here) nor of
    // those since a time (--since, cut here): then it is left out rather than shown as the total of what was asked.
    const count = match || sinceMs !== undefined ? undefined : stats.count;
    if (wantsJson(ctx)) {
      json(ctx, { ...(count !== undefined ? { count } : {}), records: records.map(shownRecord) });
    } else if (records.length === 0) {
      ctx.stdout.write('No delivery records match.\n');
    } else {
      ctx.stdout.write(await recordTable(records));
      // the read stops at the limit, before the page that would say the history ended: the service's count says it
      const more = records.length >= limit && !stats.exhausted && !(count !== undefined && records.length >= count);
      const total = count !== undefined ? ` of ${count}` : '';
      ctx.stderr.write(`${records.length}${total} ${agree(records.length, 'record', 'records')}, newest first${more ? `; --limit ${limit * 5} shows more` : ''}\n`);
    }
    // on stderr with -o json too (as retry --failed says them): a job reading the JSON learns the read is incomplete
    if (stats.truncated) ctx.stderr.write(`note: the read stopped after ${stats.requests} pages (${stats.received} records); older records were not read\n`);
    if (stats.unpaged) ctx.stderr.write(unpagedNote(stats, 'records'));
    if (stats.undated) ctx.stderr.write(undatedNote(stats.undated));
    process.exitCode = EXIT.ok;
  } finally {
    await api.close();
  }
}

/** The note for records `--since` left out because they have no date. */
function undatedNote(n: number): string {
  return `note: ${counted(n, 'record')} without a date (no createdAt) left out: --since cannot place them\n`;
}

/** The note for a read that stopped because the service answered a page with records already read. */
function unpagedNote(stats: ReadStats, what: string): string {
  return (
    `note: the read stopped after ${stats.requests} pages (${stats.received} records): page ${stats.requests} held only records already read, ` +
    `so the service does not page its history (offset); older ${what} it did not send were not read\n`
  );
}

// ---- retry --------------------------------------------------------------------------------------

/**
 * The webhook entries of the state whose recorded id is still theirs: not a pending create (no id yet), nor an id the
 * service now gives another webhook (another identity than the one recorded: plan/stale.ts), whose deliveries are
 * someone else's. An id no longer live is kept (its records may still be listed; a retry of them is a 404).
 */
function managedEntries(state: GovopsState, live: readonly LiveWebhook[]): ManagedResource[] {
  const byId = new Map(live.map((w) => [w.id, w]));
  return state.resources.filter((r) => {
    if (r.kind !== 'Webhook' || r.id === '' || r.pending === 'create') return false;
    const now = byId.get(r.id);
    return now === undefined || r.identity === undefined || recordedWebhookIdentity(r.identity, state.fingerprintKey) === liveWebhookIdentity(now, state.fingerprintKey);
  });
}

/** The deliveries `retry --failed` replays: newest record of each delivery failed, oldest first, at most max. */
async function selectFailed(
  api: ServiceApi,
  name: string | undefined,
  flags: RetryFlags,
  ctx: CliContext,
  command: Command,
): Promise<{ selected: WebhookHistoryRecord[]; more: number }> {
  const max = parseCount('--max', flags.max ?? DEFAULT_RETRY_MAX, 1)!;
  const sinceMs = parseSince('--since', flags.since ?? DEFAULT_RETRY_SINCE, Date.now());
  let scope: Set<string> | undefined;
  if (name !== undefined) {
    const all = await api.listWebhooks();
    const entries = managedEntries(await namedState(command, flags.state, 'retry the webhooks of that name against no state'), all);
    // NAME is a webhook's name in the service, or the manifest name govops manages one under (metadata.name; the
    // name in the service is its spec.name when written): the webhooks of that name in the service.
    const byManifest = entries.find((r) => r.name === name && all.some((w) => w.id === r.id));
    const serviceName = byManifest ? all.find((w) => w.id === byManifest.id)!.name : name;
    const live = all.filter((w) => w.name === serviceName);
    if (live.length === 0) throw new UserError(`no webhook named "${name}" in the service`, 'govops webhooks list shows the live webhooks');
    scope = new Set(live.map((w) => w.id));
    // Names are not unique in the service (an administrator's token sees every team's webhooks): NAME is the
    // webhook govops manages under that name; several others of that name are ambiguous. --all-webhooks: every one.
    if (!flags.allWebhooks) {
      const ours = entries.filter((r) => scope!.has(r.id));
      const recorded = byManifest ?? (ours.length === 1 ? ours[0] : undefined);
      if (recorded && scope.has(recorded.id)) scope = new Set([recorded.id]);
      else if (scope.size > 1) {
        throw new UserError(
          `${scope.size} live webhooks are named "${name}" (ids ${[...scope].join(', ')}) and the state ${describeStateLocation(flags.state)} records none of them`,
          'retry by history id (govops webhooks history NAME shows them), pass the --state that manages one, or --all-webhooks for all of them',
        );
      }
    }
  } else if (!flags.allWebhooks) {
    const state = await namedState(command, flags.state, 'use the default state (.govops/state.json), or name a webhook or give --all-webhooks');
    // Not a webhook whose delete is pending (sent, its answer not seen yet): govops is removing it, and the daemon's
    // automatic retries leave it alone too. Named (retry --failed NAME), it is retried: the user asks for it.
    const entries = managedEntries(state, await api.listWebhooks()).filter((r) => r.pending !== 'delete');
    scope = new Set(entries.map((r) => r.id));
    if (scope.size === 0) {
      const reused = state.resources.filter((r) => r.kind === 'Webhook' && r.id !== '' && r.pending === undefined && !entries.includes(r)).map((r) => r.id);
      throw new UserError(
        `the state ${describeStateLocation(flags.state)} records no webhook govops manages${reused.length ? ` (webhook id ${reused.join(', ')} ${reused.length === 1 ? 'is' : 'are'} now another webhook's)` : ''}`,
        'name a webhook (retry --failed NAME), pass --state, or --all-webhooks for every webhook the token sees',
      );
    }
  }
  // Every record of the window, successes too: a delivery retried successfully since is not replayed.
  const records: WebhookHistoryRecord[] = [];
  const match = scope ? (r: WebhookHistoryRecord) => scope.has(r.webhookId) : undefined;
  const filters = { includeGlobal: true, includeUser: true };
  const stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false };
  for await (const r of readHistory(api, { filters, sinceMs, match, onFilterFallback: fallbackNote(ctx) }, stats)) records.push(r);
  if (stats.truncated) ctx.stderr.write(`note: the read stopped after ${stats.requests} pages (${stats.received} records); older failed deliveries were not looked at\n`);
  if (stats.unpaged) ctx.stderr.write(unpagedNote(stats, 'failed deliveries'));
  if (stats.undated) ctx.stderr.write(undatedNote(stats.undated));
  // A record the service sent without its id cannot be retried (POST /webhooks/history/retry/ names no record).
  const ungrouped: WebhookHistoryRecord[] = [];
  const all = failedDeliveries(records, ungrouped);
  const failed = all.filter((d) => d.record.id !== '');
  const idless = all.length - failed.length;
  if (idless) ctx.stderr.write(`note: ${counted(idless, 'failed delivery record')} without a history id (the service sent none) cannot be retried\n`);
  if (ungrouped.length) {
    ctx.stderr.write(
      `note: ${counted(ungrouped.length, 'failed record')} without webhooksActivityId nor request payload not retried (a retry of them may have got through since); retry them by id if needed\n`,
    );
  }
  return { selected: failed.slice(0, max).map((d) => d.record), more: Math.max(0, failed.length - max) };
}

/** A refusal that holds for every id: the token (401), its permission (403), or no connection to the service. */
function refusesAll(err: Error | undefined): err is ApiError | TransportError {
  return retryStopReason(err) !== undefined;
}

/** A 403 as the user reads it: the token is known, it may not retry these deliveries; which token to use instead. */
function forbidden(err: ApiError): UserError {
  return new UserError(
    `the service refused the retry: ${err.toString()}`,
    RETRY_FORBIDDEN_HINT,
    { code: err.code },
  );
}

/**
 * Retry the ids. A token the service refuses (401), a permission it refuses (403), a service that cannot be
 * reached (the connection not opened, after the client's retries: nothing was sent) and one that rate limits (429
 * past the client's retries: each next id would meet it too) hold for every id: the first id
 * is retried alone, and the first such failure stops the run; the ids not attempted are named on stderr and count as
 * not delivered. It is thrown, to be reported as the error it is (with the token's or the permission's hint), as every
 * other command reports it, unless a retry got through. Before, each id was tried and shown as a failed row ("N
 * retried: 0 delivered, N failed"), nothing having been retried; a 403 was sent and reported once per id.
 */
async function retryUntilRefused(
  api: ServiceApi,
  ids: readonly string[],
  concurrency: number,
  ctx: CliContext,
): Promise<{ outcomes: RetryOutcome[]; notAttempted: string[] }> {
  const stop = new AbortController();
  let refused: ApiError | TransportError | undefined;
  const unique = uniqueIds(ids);
  const options = {
    concurrency,
    signal: stop.signal,
    onResult: (o: RetryOutcome) => {
      if (refusesAll(o.error)) {
        refused ??= o.error;
        stop.abort();
      }
      ctx.logger.info({ historyId: o.historyId, newId: o.record?.id, statusCode: o.record?.statusCode, ok: o.ok }, 'webhook delivery retried');
    },
  };
  // the first alone: a refusal that holds for every id then costs one request, not one per id in flight
  const outcomes = await retryDeliveries(api, unique.slice(0, 1), options);
  if (!stop.signal.aborted) outcomes.push(...(await retryDeliveries(api, unique.slice(1), options)));
  const attempted = new Set(outcomes.map((o) => o.historyId));
  const notAttempted = unique.filter((id) => !attempted.has(id));
  if (refused && notAttempted.length) {
    const why = retryStopReason(refused) === 'rate_limited' ? 'the service rate limits the retries (429 past the client\'s retries); retry them later' : 'stopped at the first refusal; retry them once it is fixed';
    ctx.stderr.write(`note: not attempted: ${notAttempted.length} (history ids ${notAttempted.join(', ')}), ${why}\n`);
  }
  if (refused && !outcomes.some((o) => o.ok)) throw refused instanceof ApiError && refused.statusCode === 403 ? forbidden(refused) : refused;
  return { outcomes, notAttempted };
}

export async function retryAction(targets: string[], flags: RetryFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const concurrency = parseCount('--concurrency', flags.concurrency, 1)!;
  if (!flags.failed) {
    if (flags.since !== undefined || flags.max !== undefined || flags.allWebhooks) {
      throw new UserError('--since, --max and --all-webhooks select failed deliveries: use them with --failed');
    }
    if (targets.length === 0) {
      throw new UserError('nothing to retry', 'give history ids (govops webhooks history shows them), or --failed [NAME]');
    }
    const bad = targets.filter((t) => !/^\d+$/.test(t));
    if (bad.length) {
      throw new UserError(
        `not a history id: ${bad.map((b) => JSON.stringify(b)).join(', ')} (history ids are integers)`,
        'to retry the failed deliveries of a webhook: govops webhooks retry --failed NAME',
      );
    }
  } else if (targets.length > 1) {
    throw new UserError('--failed takes at most one webhook NAME', `got ${targets.length} arguments: ${targets.join(' ')}`);
  }
  const api = clientFromOptions(flags, ctx.logger);
  try {
    let ids: string[];
    let selected: WebhookHistoryRecord[] = [];
    let more = 0;
    if (flags.failed) {
      ({ selected, more } = await selectFailed(api, targets[0], flags, ctx, command));
      ids = selected.map((r) => r.id);
      if (more > 0) ctx.stderr.write(`note: ${more} more failed deliveries not selected (--max); run again or raise --max\n`);
    } else {
      ids = uniqueIds(targets);
    }
    if (flags.dryRun) {
      if (wantsJson(ctx)) json(ctx, { dryRun: true, ids, records: selected.map(shownRecord) });
      else if (ids.length === 0) ctx.stdout.write('Nothing to retry.\n');
      else if (selected.length) ctx.stdout.write(`Would retry ${ids.length} deliveries:\n${await recordTable(selected)}`);
      else ctx.stdout.write(`Would retry history records ${ids.join(', ')}\n`);
      process.exitCode = EXIT.ok;
      return;
    }
    if (ids.length === 0) {
      if (wantsJson(ctx)) json(ctx, { retried: 0, delivered: 0, failed: 0, results: [] });
      else ctx.stdout.write('Nothing to retry: no failed deliveries in the window.\n');
      process.exitCode = EXIT.ok;
      return;
    }
    const { outcomes, notAttempted } = await retryUntilRefused(api, ids, concurrency, ctx);
    const delivered = outcomes.filter((o) => o.ok).length;
    if (wantsJson(ctx)) {
      json(ctx, {
        retried: outcomes.length,
        delivered,
        failed: outcomes.length - delivered,
        ...(notAttempted.length ? { notAttempted } : {}),
        // a retry request that failed carries its stable code (GOVOPS_API_NOT_FOUND...), for a job to decide on; not the text
        results: outcomes.map((o) => ({
          historyId: o.historyId,
          ok: o.ok,
          ...(o.record ? { record: shownRecord(o.record) } : {}),
          ...(o.error ? { error: o.error.message, code: classify(o.error).code } : {}),
        })),
      });
    } else {
      ctx.stdout.write(await retryTable(outcomes));
      // an id whose retry request failed (404: no such record) was not retried: counted apart, not as a failed retry
      const notRetried = outcomes.filter((o) => !o.record).length;
      const retried = outcomes.length - notRetried;
      const apart = notRetried ? `; ${notRetried} not retried (the retry request failed: listed above)` : '';
      ctx.stderr.write(`${retried} retried: ${delivered} delivered, ${retried - delivered} failed${apart}\n`);
    }
    process.exitCode = delivered === outcomes.length && notAttempted.length === 0 ? EXIT.ok : EXIT.error;
  } finally {
    await api.close();
  }
}

// ---- events -------------------------------------------------------------------------------------

export async function eventsAction(flags: ConnectionFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const api = clientFromOptions(flags, ctx.logger);
  try {
    const served = await api.listWebhookActions();
    const known = new Set<string>(WEBHOOK_ACTIONS);
    const servedSet = new Set(served);
    const unknownToGovops = served.filter((n) => !known.has(n));
    const notServed = WEBHOOK_ACTIONS.filter((n) => !servedSet.has(n));
    if (wantsJson(ctx)) {
      json(ctx, { events: served, unknownToGovops, notServed });
    } else {
      for (const n of served) ctx.stdout.write(`${cell(n, 200)}\n`);
      if (unknownToGovops.length) {
        ctx.stderr.write(`note: the service lists ${counted(unknownToGovops.length, 'name')} govops validate does not know (it rejects them): ${unknownToGovops.map((n) => cell(n)).join(', ')}\n`);
      }
      if (notServed.length) {
        ctx.stderr.write(`note: ${counted(notServed.length, 'name')} govops validate accepts ${agree(notServed.length, 'is', 'are')} not listed by the service: ${notServed.join(', ')}\n`);
      }
    }
    process.exitCode = EXIT.ok;
  } finally {
    await api.close();
  }
}

// ---- list ---------------------------------------------------------------------------------------

/** A URL for a terminal: no userinfo, no query string (either may hold a credential), no path holding a token. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    const auth = u.username || u.password ? '***@' : '';
    return cell(`${u.protocol}//${auth}${u.host}${pathCarriesToken(url) ? '/…' : u.pathname}${u.search ? '?…' : ''}`, 120);
  } catch {
    return cell(url, 120);
  }
}

type Owner = 'managed' | 'adopted' | 'unmanaged';

/** The one-line summary of `webhooks list`: counts by owner, and what the next apply does with unmanaged ones. */
function listSummary(rows: ReadonlyArray<{ webhook: LiveWebhook; owner: Owner; manifest: unknown }>, noAdopt: boolean): string {
  const counts = { managed: 0, adopted: 0, unmanaged: 0 };
  for (const r of rows) counts[r.owner]++;
  // A manifest matching one unmanaged webhook adopts it; matching several, the plan refuses them all (duplicates).
  const matching = new Map<string, number>();
  for (const r of rows) if (r.owner === 'unmanaged' && r.manifest) matching.set(r.webhook.name, (matching.get(r.webhook.name) ?? 0) + 1);
  const adoptable = [...matching.values()].filter((n) => n === 1).length;
  const shared = [...matching.values()].filter((n) => n > 1).reduce((a, n) => a + n, 0);
  const notes = [
    // where the operator leaves adoption to state adopt (GOVOPS_NO_ADOPT: plan and apply --no-adopt), they are blocked
    ...(adoptable
      ? [`${adoptable} with a manifest of the same name: the next apply ${noAdopt ? 'blocks them, GOVOPS_NO_ADOPT; govops state adopt records one' : 'adopts them'}`]
      : []),
    ...(shared ? [`${shared} share the name of a manifest: the next plan refuses to match them until one is removed`] : []),
  ];
  return `${counted(rows.length, 'webhook')}: ${counts.managed} managed, ${counts.adopted} adopted, ${counts.unmanaged} unmanaged${notes.length ? ` (${notes.join('; ')})` : ''}\n`;
}

/**
 * The webhook manifests by metadata.name (where each is), and their metadata.name by their name in the service
 * (spec.name, else metadata.name): what an unrecorded live webhook matches.
 */
function webhookManifests(list: readonly LoadedManifest[]): { manifests: Map<string, { file: string; line: number }>; byServiceName: Map<string, string> } {
  const manifests = new Map<string, { file: string; line: number }>();
  const byServiceName = new Map<string, string>();
  for (const m of list) {
    if (m.manifest.kind !== 'Webhook') continue;
    manifests.set(m.manifest.metadata.name, { file: m.source.file, line: m.source.line });
    byServiceName.set(webhookServiceName(m.manifest), m.manifest.metadata.name);
  }
  return { manifests, byServiceName };
}

/**
 * Who owns each live webhook by the state: the entry recorded at its id (`byId`), the manifest names whose recorded
 * webhook is live (`held`), and the entries whose id the service has since given another webhook (`stale`).
 */
function ownership(state: GovopsState, live: readonly LiveWebhook[]) {
  // An entry whose id now holds another webhook (another identity than the one recorded) is not that webhook's owner:
  // the plan forgets the record, and retry --failed leaves the other's deliveries alone.
  const liveById = new Map(live.map((w) => [w.id, w]));
  const stale = state.resources.filter((r) => {
    const now = r.kind === 'Webhook' ? liveById.get(r.id) : undefined;
    return now !== undefined && r.identity !== undefined && recordedWebhookIdentity(r.identity, state.fingerprintKey) !== liveWebhookIdentity(now, state.fingerprintKey);
  });
  const entries = state.resources.filter((r) => r.kind === 'Webhook' && !stale.includes(r));
  // the entry of each webhook id as a scan finds it, made once, not a scan of the state per webhook
  const byId = firstBy(entries, (r) => r.id);
  // A manifest whose recorded webhook is live is that webhook's: another live webhook that merely shares the name
  // (another team's) is never matched to it, nor adopted by the next apply (the plan reports it as a duplicate).
  const held = new Set(entries.filter((r) => liveById.has(r.id)).map((r) => r.name));
  // A copy govops' own create left (an entry's `copies`: a live webhook of the name of the entry's live one, which no
  // entry records): govops' own, deleted by apply --prune (plan/duplicates.ts). It was shown `unmanaged`, what govops
  // never deletes.
  const copyOf = new Map<string, ManagedResource>();
  for (const r of entries) {
    const kept = liveById.get(r.id);
    for (const id of kept ? (r.copies ?? []) : []) {
      const copy = liveById.get(id);
      if (copy && copy.name === kept!.name && !byId.has(id)) copyOf.set(id, r);
    }
  }
  return { byId, held, stale, liveById, copyOf };
}

export async function listAction(paths: string[], flags: ListFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const set = await loadManifests(paths.length ? paths : ['.'], { cwd: process.cwd(), secretScope: secretScopeFromFlags(flags), ...stdinStream(paths) });
  const problems = set.diagnostics.filter((d) => d.severity === 'error').length;
  if (problems) ctx.stderr.write(`warning: ${counted(problems, 'manifest problem')}; run govops validate (manifests with errors are not matched)\n`);
  const { manifests, byServiceName } = webhookManifests(set.manifests);
  // (a typo of a named state listed every webhook as unmanaged, and as adopted by the next apply)
  const state = await namedState(command, flags.state, 'list the webhooks against no state');
  const api = clientFromOptions(flags, ctx.logger);
  try {
    const live = await api.listWebhooks();
    const liveIds = new Set(live.map((w) => w.id));
    const { byId, held, stale, liveById, copyOf } = ownership(state, live);
    const rows = live
      .map((w) => {
        const recorded = byId.get(w.id);
        const copied = recorded ? undefined : copyOf.get(w.id);
        const owner: Owner = copied ? 'managed' : recorded ? (recorded.origin === 'created' ? 'managed' : 'adopted') : 'unmanaged';
        const named = recorded?.name ?? copied?.name ?? byServiceName.get(w.name);
        const manifest = named !== undefined && (recorded || copied || !held.has(named)) ? manifests.get(named) : undefined;
        return { webhook: w, owner, manifestName: manifest ? named : undefined, manifest };
      })
      .sort((a, b) => (a.webhook.name < b.webhook.name ? -1 : a.webhook.name > b.webhook.name ? 1 : Number(a.webhook.id) - Number(b.webhook.id)));
    const missing = state.resources.filter((r) => r.kind === 'Webhook' && !liveIds.has(r.id));
    if (wantsJson(ctx)) {
      json(
        ctx,
        rows.map((r) => ({
          id: r.webhook.id,
          name: r.webhook.name,
          url: urlWithoutCredential(r.webhook.url),
          global: r.webhook.global,
          notificationType: r.webhook.notificationType,
          createdBy: r.webhook.createdBy,
          owner: r.owner,
          manifest: r.manifest ? { name: r.manifestName, file: r.manifest.file, line: r.manifest.line } : null,
        })),
      );
    } else if (rows.length === 0) {
      ctx.stdout.write('No webhooks in the service.\n');
    } else {
      const out = [['ID', 'NAME', 'OWNER', 'MANIFEST', 'GLOBAL', 'EVENTS', 'URL']];
      for (const r of rows) {
        out.push([
          cell(r.webhook.id, 20),
          cell(r.webhook.name, 48),
          r.owner,
          // the path is cut, not the line number after it
          r.manifest ? `${cell(r.manifest.file, 79 - String(r.manifest.line).length)}:${r.manifest.line}` : '-',
          r.webhook.global ? 'yes' : 'no',
          cell(r.webhook.notificationType.join(','), 60),
          displayUrl(r.webhook.url),
        ]);
      }
      ctx.stdout.write(await table(out));
      ctx.stderr.write(listSummary(rows, envSwitchOn('GOVOPS_NO_ADOPT')));
    }
    for (const r of missing) {
      if (r.id === '') ctx.stderr.write(`note: Webhook/${r.name}: its create was not confirmed (an interrupted run); the next plan looks for it in the service\n`);
      else ctx.stderr.write(`note: Webhook/${r.name} is in the state (id ${cell(r.id, 20)}) but not in the service; the next apply creates it again\n`);
    }
    for (const [id, r] of copyOf) {
      ctx.stderr.write(`note: webhook ${cell(id, 20)} is a copy of Webhook/${r.name} (id ${cell(r.id, 20)}) govops' own create left: apply --prune deletes it\n`);
    }
    for (const r of stale) {
      // the other webhook's name is someone else's choice: JSON-quoted, escaped for the terminal
      ctx.stderr.write(`note: Webhook/${r.name}: its recorded id ${cell(r.id, 20)} is now another webhook's (${printableJson(liveById.get(r.id)!.name)}); the next plan forgets the record\n`);
    }
    process.exitCode = EXIT.ok;
  } finally {
    await api.close();
  }
}
