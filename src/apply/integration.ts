/**
 * Carrying out one integration change against the service: dry run first, then the real call,
 * then poll the status. 409 → wait for the status to settle and retry (within the deadline);
 * 400 "previously failed to create" on create → PUT on the named id; 422 → failure with tests.
 */
import type { ServiceApi } from '../api/client-types.js';
import type { IntegrationBody, IntegrationMutationResult, LiveIntegration } from '../api/types.js';
import { ApiError } from '../errors.js';
import { ERROR_STATUSES, naturalKey } from '../service/kinds.js';
import { sleep, waitSettled, nextInterval, type PollSettings } from './poll.js';
import { ApplyFailure, failingTests, resultsFromError, validationFailure } from './validation.js';

export interface OpContext {
  api: ServiceApi;
  poll: PollSettings;
}

export interface OpResult {
  id: string;
  status: string;
}

/** Call `fn`; on 409 wait for the integration to settle, then retry until the deadline. */
async function retryOnConflict<T>(ctx: OpContext, id: string | undefined, fn: () => Promise<T>): Promise<T> {
  let backoff = ctx.poll.initialMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ApiError) || err.statusCode !== 409 || id === undefined) throw err;
      if (Date.now() + backoff >= ctx.poll.deadline) {
        throw new ApplyFailure(`still conflicting (409) at the deadline: ${err.message}`, undefined, id);
      }
      const status = await waitSettled(ctx.api, id, ctx.poll, false);
      if (status === 'gone') throw new ApplyFailure(`integration ${id} was deleted meanwhile: plan again`);
      await sleep(backoff); // the status may already be settled while the service still answers 409
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
      throw validationFailure(`${what} failed validation (422)`, resultsFromError(err), id, err.message);
    }
    throw err;
  }
  if (failingTests(result.validationResults).length > 0) {
    throw validationFailure(`${what} failed validation`, result.validationResults, id);
  }
  return result;
}

/** After a real call: poll until settled; an error status is a failure with the validation results. */
async function settle(ctx: OpContext, id: string, what: string): Promise<OpResult> {
  const status = await waitSettled(ctx.api, id, ctx.poll);
  if (status === 'gone') throw new ApplyFailure(`integration ${id} disappeared during ${what}`);
  if (ERROR_STATUSES.has(status)) {
    let live: LiveIntegration | undefined;
    try {
      live = await ctx.api.getIntegration(id);
    } catch {
      /* the failure below still says what happened */
    }
    throw validationFailure(`${what} ended in status ${status}`, live?.validationResults, id);
  }
  return { id, status };
}

const PREVIOUSLY_FAILED = /previously failed/i;

/** The id named in a "previously failed to create" message, else found by natural key. */
async function failedCreationId(ctx: OpContext, err: ApiError, body: IntegrationBody): Promise<string | undefined> {
  const m = /\bid\D{0,5}(\d+)/i.exec(err.message) ?? /(\d+)/.exec(err.message);
  if (m) return m[1];
  const key = naturalKey(body.type, body.config);
  const live = await ctx.api.listIntegrations();
  return live.find((l) => naturalKey(l.type, l.config) === key)?.id;
}

export async function createIntegration(ctx: OpContext, body: IntegrationBody): Promise<OpResult> {
  try {
    await mutate('create (dry run)', undefined, () => ctx.api.createIntegration(body, { dryRun: true }));
    const created = await mutate('create', undefined, () => ctx.api.createIntegration(body));
    return await settle(ctx, created.id, 'create');
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 400 && PREVIOUSLY_FAILED.test(err.message)) {
      const id = await failedCreationId(ctx, err, body);
      if (id === undefined) throw new ApplyFailure(`create: ${err.message} (and no id could be found to PUT)`);
      return updateIntegration(ctx, id, body);
    }
    if (err instanceof ApiError && err.statusCode === 409) {
      throw new ApplyFailure(`create: ${err.message}: it already exists; run plan again to adopt it`);
    }
    throw err;
  }
}

export async function updateIntegration(ctx: OpContext, id: string, body: IntegrationBody): Promise<OpResult> {
  await retryOnConflict(ctx, id, () =>
    mutate('update (dry run)', id, () => ctx.api.updateIntegration(id, body, { dryRun: true })),
  );
  await retryOnConflict(ctx, id, () => mutate('update', id, () => ctx.api.updateIntegration(id, body)));
  return settle(ctx, id, 'update');
}

export async function deleteIntegration(
  ctx: OpContext,
  id: string,
  payload: Record<string, unknown> | undefined,
): Promise<void> {
  try {
    await retryOnConflict(ctx, id, () =>
      mutate('delete (dry run)', id, () => ctx.api.deleteIntegration(id, payload, { dryRun: true })),
    );
    await retryOnConflict(ctx, id, () => mutate('delete', id, () => ctx.api.deleteIntegration(id, payload)));
  } catch (err) {
    if (err instanceof ApiError && err.statusCode === 404) return; // already gone
    throw err;
  }
  const status = await waitSettled(ctx.api, id, ctx.poll);
  if (status === 'gone') return;
  if (ERROR_STATUSES.has(status)) {
    let live: LiveIntegration | undefined;
    try {
      live = await ctx.api.getIntegration(id);
    } catch {
      /* reported below */
    }
    throw validationFailure(`delete ended in status ${status}`, live?.validationResults, id);
  }
  throw new ApplyFailure(`delete: integration ${id} is ${status}, not gone`, undefined, id);
}
