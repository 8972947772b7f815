/**
 * The service calls of one integration change, one function per phase (dry run, write, settle), used by
 * the steps in tasks.ts. 409 on a write means the integration is busy: wait for its status to settle,
 * then retry, a bounded number of times. A create is recovered by natural key, never by an id read
 * from an error message.
 */
import type { ServiceApi } from '../api/client-types.js';
import { findCreatedIntegration } from '../api/recovery.js';
import type { IntegrationBody, IntegrationMutationResult, LiveIntegration } from '../api/types.js';
import { notProcessed } from '../api/retry.js';
import { ApiError, ErrorCode, failureKind } from '../errors.js';
import { liveIntegrationIdentity } from '../plan/stale.js';
import { ERROR_STATUSES } from '../service/kinds.js';
import { naturalKey } from '../kinds/registry.js';
import { nextInterval, sleep, waitSettled, type PollSettings } from './poll.js';
import type { StatusWaiter, WaitRequest } from './poller.js';
import type { Operation } from './transitions.js';
import { ApplyFailure, resultsFromError, validationFailure, validationVerdict } from './validation.js';

export interface OpContext {
  api: ServiceApi;
  poll: PollSettings;
  /** The apply's shared poller (poller.ts); without one, each wait polls on its own (doubling intervals). */
  poller?: StatusWaiter;
  /** Run a wait without holding the concurrency slot the call runs in (slots.ts `SlotLease`); absent: no slot. */
  outsideSlot?<T>(wait: () => Promise<T>): Promise<T>;
  /**
   * The operator's --no-adopt (plan/adoption.ts): an integration govops does not own that a create meets is never
   * written, not even the one the service says to fix with PUT (it "previously failed to create").
   */
  noAdopt?: boolean;
}

/** Which transition a settle waits for: the type and operation (what is learned), and when it began. */
export interface Transition {
  type?: string;
  op: Operation;
  startedAt?: number;
}

/** Wait until the integration leaves the transitional statuses: the status, or `gone`. */
export function awaitSettled(ctx: OpContext, req: WaitRequest): Promise<string> {
  if (ctx.poller) return ctx.poller.wait(req);
  const poll = req.until !== undefined && req.until < ctx.poll.deadline ? { ...ctx.poll, deadline: req.until } : ctx.poll;
  return waitSettled(ctx.api, req.id, poll, !req.immediate);
}

/** Retries after a 409 before giving up (each after the integration settled). */
export const MAX_CONFLICT_RETRIES = 5;

/** A failure this task retries (the catalogue's `task` codes: a 409 on a write, the integration is busy). */
const isConflict = (err: unknown): err is ApiError => err instanceof ApiError && failureKind(err.code).retriedBy === 'task';

const isNotFound = (err: unknown): boolean => err instanceof ApiError && err.statusCode === 404;

/** The identity (plan/stale.ts) of the integration at `id` now, or undefined when there is none (404). */
async function identityAt(ctx: OpContext, id: string): Promise<string | undefined> {
  try {
    return liveIntegrationIdentity(await ctx.api.getIntegration(id));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * Call `fn`; on 409 wait for the integration `id` to leave editing/deleting (when there is an id),
 * back off, and retry: at most MAX_CONFLICT_RETRIES times and never past the deadline. The retry is sent by id only
 * while the integration there is still the one that answered 409 (its identity, read at the first 409 and again after
 * each wait): a service may give the id of an integration deleted meanwhile to the next one created, and the write
 * would go to that one (someone else's: a prune deleted it).
 */
export async function retryOnConflict<T>(ctx: OpContext, id: string | undefined, what: string, fn: () => Promise<T>): Promise<T> {
  let backoff = ctx.poll.initialMs;
  let identity: string | undefined;
  for (let retry = 0; ; retry++) {
    try {
      return await fn();
    } catch (err) {
      if (!isConflict(err)) throw err;
      if (retry >= MAX_CONFLICT_RETRIES || ctx.poll.clock.monotonic() + backoff >= ctx.poll.deadline) {
        throw new ApplyFailure(ErrorCode.conflictPersists, `${what}: still conflicting (409) after ${retry + 1} tries: ${err.message}`, {
          ...(id !== undefined ? { liveId: id } : {}),
          cause: err,
        });
      }
      // another's transition is waited on without holding a concurrency slot (it may last the whole --timeout)
      const outside = ctx.outsideSlot ?? (<U>(wait: () => Promise<U>) => wait());
      await outside(async () => {
        if (id !== undefined) {
          identity ??= await identityAt(ctx, id);
          const status = identity === undefined ? 'gone' : await awaitSettled(ctx, { id, op: 'update', learn: false, immediate: true });
          if (status === 'gone') throw new ApplyFailure(ErrorCode.resourceGone, `integration ${id} was deleted meanwhile: plan again`);
          const now = await identityAt(ctx, id);
          if (now !== identity) {
            throw new ApplyFailure(
              ErrorCode.resourceGone,
              `integration ${id} was deleted meanwhile${now === undefined ? '' : ' and its id given to another integration (not written)'}: plan again`,
            );
          }
        }
        await sleep(ctx.poll.clock, backoff, ctx.poll.signal); // the status may already be settled while the service still answers 409
      });
      backoff = nextInterval(backoff, ctx.poll.maxMs);
    }
  }
}

/** A mutation (dry run or real): 422 and failing tests become an ApplyFailure with the tests. */
async function mutate(
  what: string,
  id: string | undefined,
  call: () => Promise<IntegrationMutationResult>,
): Promise<IntegrationMutationResult> {
  let result: IntegrationMutationResult;
  try {
    result = await call();
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 422) {
      throw validationFailure(`${what} failed validation (422)`, resultsFromError(err), id, err.message, ErrorCode.validationFailed, err);
    }
    throw err;
  }
  if (validationVerdict(result.validationResults).verdict === 'failed') {
    throw validationFailure(`${what} failed validation`, result.validationResults, id);
  }
  return result;
}

/** After a real call: poll until settled; an error status is a failure with the validation results. */
export async function settleIntegration(ctx: OpContext, id: string, what: string, t: Transition & Pick<WaitRequest, 'learn' | 'immediate' | 'until'>): Promise<string> {
  const status = await awaitSettled(ctx, { id, ...t });
  if (status === 'gone') throw new ApplyFailure(ErrorCode.resourceGone, `integration ${id} disappeared during ${what}`);
  if (ERROR_STATUSES.has(status)) throw await statusFailure(ctx, id, `${what} ended in status ${status}`);
  return status;
}

async function statusFailure(ctx: OpContext, id: string, what: string): Promise<ApplyFailure> {
  let live: LiveIntegration | undefined;
  try {
    live = await ctx.api.getIntegration(id);
  } catch {
    /* the failure still says what happened */
  }
  return validationFailure(what, live?.validationResults, id, undefined, ErrorCode.statusError);
}

/** The one live integration with the body's natural key, if any. */
async function findByNaturalKey(ctx: OpContext, body: IntegrationBody): Promise<LiveIntegration | undefined> {
  return findCreatedIntegration(await ctx.api.listIntegrations(), body).hit;
}

// ---- create ----------------------------------------------------------------------------------

/**
 * A failure of the create's POST that certainly created nothing: the service answered it with a 4xx (a 422 comes as
 * the ApplyFailure it caused), or it was never sent. A failing verdict in a 2xx answer is not one: it may have landed.
 */
function notCreated(err: unknown): boolean {
  return notProcessed(err) || (err instanceof ApplyFailure && notProcessed(err.cause));
}

/**
 * The id to fix with PUT when a create failed with 400 because an earlier creation on that host failed
 * (interface 7: "previously failed to create; use PUT to fix it"): the integration found by natural
 * key in an error status. Never an id read from the message.
 */
async function failedCreation(ctx: OpContext, body: IntegrationBody, err: unknown, ref: string | undefined): Promise<string | undefined> {
  if (!(err instanceof ApiError) || err.statusCode !== 400) return undefined;
  const found = await findByNaturalKey(ctx, body);
  if (!found || !ERROR_STATUSES.has(found.status)) return undefined;
  // A create is planned only when no live integration had this natural key: the one there now is not govops' (made
  // since the plan, or one a lagging list left out). Under --no-adopt it is the operator's to take over.
  if (ctx.noAdopt) {
    throw new ApplyFailure(
      ErrorCode.alreadyExists,
      `create: integration ${found.id} with the same identity already exists in status ${found.status} (it failed to create; ` +
        `govops does not own it): not fixed with PUT under --no-adopt. To manage it, the operator runs ` +
        `govops state adopt ${ref ?? 'Integration/NAME'} --id ${found.id} and applies`,
      { cause: err },
    );
  }
  return found.id;
}

/**
 * Dry run of a create. Returns the id of an integration that failed to create earlier when the
 * service answers that it must be fixed with PUT instead (then the update was dry-run).
 */
export async function dryRunCreate(ctx: OpContext, body: IntegrationBody, ref?: string, ownEarlier = false): Promise<string | undefined> {
  try {
    await retryOnConflict(ctx, undefined, 'create (dry run)', async () => {
      try {
        return await mutate('create (dry run)', undefined, () => ctx.api.createIntegration(body, { dryRun: true }));
      } catch (err) {
        // A POST's 409 is "an integration already exists on the host" (interface 7): busy only when none is found. One
        // found is someone else's, unless an earlier create of this one is pending (`ownEarlier`): that one is govops'
        // own and the next run records it (plan/held-create.ts), so it is not named as another's.
        const found = isConflict(err) && !ownEarlier ? await findByNaturalKey(ctx, body) : undefined;
        throw found ? alreadyExists(ctx, 'create (dry run)', found, err, ref) : err;
      }
    });
    return undefined;
  } catch (err) {
    const fix = await failedCreation(ctx, body, err, ref);
    if (fix === undefined) throw err;
    await dryRunUpdate(ctx, fix, body);
    return fix;
  }
}

/**
 * The create half of a replace, dry-run before its delete: a create the service refuses (a failing test, a 422) stops
 * the replace while the integration it replaces still exists; before, the delete went first and the dry run of the
 * create found the refusal only once nothing was left. Only for a replacement with another natural key (tasks.ts): one
 * with the same key conflicts with the integration it replaces until that is gone. Any other answer (a 409 or 400:
 * another integration holds the key, one in createError) says nothing certain: the create's own dry run after the
 * delete decides, as for every create.
 */
export async function dryRunReplacement(ctx: OpContext, replacedId: string, body: IntegrationBody): Promise<void> {
  try {
    await mutate(`create (dry run, before the delete; integration ${replacedId} not deleted)`, undefined, () => ctx.api.createIntegration(body, { dryRun: true }));
  } catch (err) {
    if (err instanceof ApiError && (err.statusCode === 400 || err.statusCode === 409)) {
      // ... except another integration holding the new key (made since the plan, or one a lagging list left out): the
      // create would be refused (409) or "fix" that one with PUT (400), once the old one is deleted
      const holder = await findByNaturalKey(ctx, body);
      if (holder !== undefined && holder.id !== replacedId) {
        throw new ApplyFailure(
          ErrorCode.alreadyExists,
          `create (dry run, before the delete): integration ${holder.id} (status ${holder.status}) already has the replacement's identity ` +
            `(${naturalKey(body.type, body.config)}); integration ${replacedId} not deleted: plan again`,
          { cause: err },
        );
      }
      return;
    }
    throw err; // a failing test stops the replace; so does a service that cannot be reached (its delete would fail too)
  }
}

/** A create refused (409) because `found`, made outside this apply, has its identity: what the next plan does with it. */
function alreadyExists(ctx: OpContext, what: string, found: LiveIntegration, err: unknown, ref: string | undefined): ApplyFailure {
  return new ApplyFailure(
    ErrorCode.alreadyExists,
    `${what}: integration ${found.id} with the same identity already exists (created outside this apply); ` +
      (ctx.noAdopt
        ? `under --no-adopt the next plan blocks it: to manage it, the operator runs govops state adopt ${ref ?? 'Integration/NAME'} --id ${found.id} and applies`
        : 'the next plan adopts it'),
    { cause: err },
  );
}

/** Looks at the live list for an accepted create without an id: at most this many (a list may lag behind a write). */
export const ID_LOOKUPS = 3;

/**
 * The id of an integration whose create the service accepted without naming it (interface 4.1: the answer for
 * distributed_sql is "not shown"; an empty body, `{}` or `{ status, validationResults }` are plausible): as for an
 * answer that was lost, the one live integration of the body's type and natural key, looked up again at the poll's
 * intervals while the list may lag. Not found, or several: `GOVOPS_CREATE_ID_MISSING` at once (never a status wait
 * on `/integrations//status` until the timeout); the pending intent stays and the next run finds it.
 */
async function idOfAcceptedCreate(ctx: OpContext, body: IntegrationBody): Promise<string> {
  let wait = ctx.poll.initialMs;
  for (let look = 1; ; look++) {
    const { hit, key, count } = findCreatedIntegration(await ctx.api.listIntegrations(), body);
    if (hit) return hit.id;
    if (count > 1 || look >= ID_LOOKUPS || ctx.poll.clock.monotonic() + wait >= ctx.poll.deadline) {
      throw new ApplyFailure(
        ErrorCode.createIdMissing,
        `create: the service accepted it but its answer has no id, and ${count === 0 ? 'no live integration' : `${count} live integrations`} ` +
          `match ${key}${count === 0 ? ` (looked ${look} times)` : ''}: not re-sent; the next run finds it by its natural key`,
      );
    }
    await sleep(ctx.poll.clock, wait, ctx.poll.signal);
    wait = nextInterval(wait, ctx.poll.maxMs);
  }
}

/**
 * The real create; returns the new id. The client already resolved an answer that was lost (5xx, timeout,
 * reset) by natural key, or failed with createUnsettled (the pending intent stays: the next run finds it).
 * An answer without an id is resolved the same way (`idOfAcceptedCreate`).
 * - 400 and an integration of this natural key in an error status: it failed to create earlier: fixed
 *   by PUT (its id is returned).
 * - 409 and nothing found by natural key: the service was busy; retried (bounded).
 * - 409 and an integration found: no attempt of this create reached the service (the client would have said
 *   so), so it is someone else's: the next plan adopts it (under --no-adopt blocks it: the failure says how to adopt it).
 * - 400 as above under --no-adopt (`ctx.noAdopt`): not written, `GOVOPS_ALREADY_EXISTS` naming it (`ref`, the
 *   manifest's `Kind/name`, for the command that adopts it).
 * `refused` is called before a failure that certainly created nothing (the service answered the POST with a 4xx, or
 * was never reached): the caller drops the pending intent, so the next run does not take an integration made by
 * someone else since for the one it sent (and records it as created by govops).
 */
export async function writeCreate(ctx: OpContext, body: IntegrationBody, refused: () => void = () => undefined, ref?: string): Promise<string> {
  let backoff = ctx.poll.initialMs;
  for (let retry = 0; ; retry++) {
    try {
      const created = await mutate('create', undefined, () => ctx.api.createIntegration(body));
      return created.id !== '' ? created.id : await idOfAcceptedCreate(ctx, body);
    } catch (err) {
      let fix: string | undefined;
      try {
        fix = await failedCreation(ctx, body, err, ref);
      } catch (refusal) {
        refused();
        throw refusal;
      }
      if (fix !== undefined) {
        await writeUpdate(ctx, fix, body);
        return fix;
      }
      if (!isConflict(err)) {
        if (notCreated(err)) refused();
        throw err;
      }
      const found = await findByNaturalKey(ctx, body);
      if (found) {
        refused();
        throw alreadyExists(ctx, 'create', found, err, ref);
      }
      if (retry >= MAX_CONFLICT_RETRIES || ctx.poll.clock.monotonic() + backoff >= ctx.poll.deadline) {
        refused();
        throw new ApplyFailure(ErrorCode.conflictPersists, `create: still conflicting (409) after ${retry + 1} tries: ${err.message}`, { cause: err });
      }
      await sleep(ctx.poll.clock, backoff, ctx.poll.signal);
      backoff = nextInterval(backoff, ctx.poll.maxMs);
    }
  }
}

// ---- update ----------------------------------------------------------------------------------

export async function dryRunUpdate(ctx: OpContext, id: string, body: IntegrationBody): Promise<void> {
  await goneAs404(id, () =>
    retryOnConflict(ctx, id, 'update (dry run)', () => mutate('update (dry run)', id, () => ctx.api.updateIntegration(id, body, { dryRun: true }))),
  );
}

export async function writeUpdate(ctx: OpContext, id: string, body: IntegrationBody): Promise<void> {
  await goneAs404(id, () => retryOnConflict(ctx, id, 'update', () => mutate('update', id, () => ctx.api.updateIntegration(id, body))));
}

/**
 * A 404 on a PUT by id: the integration was deleted since govops listed it. The same failure as a 409 whose wait finds
 * it gone (`GOVOPS_RESOURCE_GONE`, transient: the next plan creates it), not the terminal `GOVOPS_API_NOT_FOUND`
 * that left the daemon waiting for its slow resync period.
 */
async function goneAs404(id: string, put: () => Promise<unknown>): Promise<void> {
  try {
    await put();
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 404) {
      throw new ApplyFailure(ErrorCode.resourceGone, `integration ${id} was deleted meanwhile (404): plan again`, { cause: err });
    }
    throw err;
  }
}

// ---- delete ----------------------------------------------------------------------------------


/**
 * Dry run of a delete; false when the integration is already gone (nothing more to do): a 404, or a 409 whose wait
 * ends in `gone`. The latter is a delete an earlier run sent and never heard back from (killed, or its answer lost
 * past the client's retries: its pending intent found the integration still `deleting`): it went through, which for a
 * delete is done, as in `writeDelete`; before, it failed as "deleted meanwhile: plan again".
 */
export async function dryRunDelete(ctx: OpContext, id: string, payload: Record<string, unknown> | undefined): Promise<boolean> {
  try {
    await retryOnConflict(ctx, id, 'delete (dry run)', () =>
      mutate('delete (dry run)', id, () => ctx.api.deleteIntegration(id, payload, { dryRun: true })),
    );
    return true;
  } catch (err) {
    if (isNotFound(err) || (err instanceof ApplyFailure && err.code === ErrorCode.resourceGone)) return false;
    throw err;
  }
}

/**
 * The real delete; false when the integration is already gone. A DELETE re-sent after a lost answer (5xx) finds
 * 404 once the first one was carried out, or 409 while it is `deleting`: then the wait for it to settle ends in
 * `gone`, which for a delete is done, not "deleted meanwhile".
 */
export async function writeDelete(ctx: OpContext, id: string, payload: Record<string, unknown> | undefined): Promise<boolean> {
  try {
    await retryOnConflict(ctx, id, 'delete', () => mutate('delete', id, () => ctx.api.deleteIntegration(id, payload)));
    return true;
  } catch (err) {
    if (isNotFound(err) || (err instanceof ApplyFailure && err.code === ErrorCode.resourceGone)) return false;
    throw err;
  }
}

/**
 * Poll until the integration is gone; an error status or a settled live integration is a failure, unless the
 * integration at the id is no longer the one deleted (another type, or another identity than `identity`, the one the
 * state recorded): it went, and a service that gives ids again gave its id to one created since.
 */
export async function settleDelete(ctx: OpContext, id: string, t: Omit<Transition, 'op'> = {}, identity?: string): Promise<void> {
  const status = await awaitSettled(ctx, { id, op: 'delete', ...t });
  if (status === 'gone' || (await idGivenAgain(ctx, id, t.type, identity))) return;
  if (ERROR_STATUSES.has(status)) throw await statusFailure(ctx, id, `delete ended in status ${status}`);
  throw new ApplyFailure(ErrorCode.statusError, `delete: integration ${id} is ${status}, not gone`, { liveId: id });
}

/** Whether the integration at `id` is not the one of this type and identity (none there: true; neither known: false). */
async function idGivenAgain(ctx: OpContext, id: string, type: string | undefined, identity: string | undefined): Promise<boolean> {
  if (type === undefined && identity === undefined) return false;
  let live: LiveIntegration;
  try {
    live = await ctx.api.getIntegration(id);
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
  return (type !== undefined && live.type !== type) || (identity !== undefined && liveIntegrationIdentity(live) !== identity);
}
