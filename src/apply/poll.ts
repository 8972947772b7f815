/**
 * Waiting for the service: poll an integration's status with an adaptive interval (start small,
 * double, cap) until it leaves the transitional statuses, or until it is gone (404), or the deadline.
 * Every wait ends at once when the run's signal aborts (CancelledError).
 */
import type { ServiceApi } from '../api/client-types.js';
import { ApiError, CancelledError, ErrorCode, classify, isAbortError } from '../errors.js';
import { describeUnsettled, isSettledStatus } from '../service/kinds.js';
import { sleep as sleepOn, type Clock } from '../util/clock.js';
import { ApplyFailure } from './validation.js';

export interface PollSettings {
  /** Time and timers (the apply's clock). */
  clock: Clock;
  /** When waiting fails, in the clock's monotonic() ms (never the time of day: a step of it must not move the deadline). */
  deadline: number;
  initialMs: number;
  maxMs: number;
  /** Ends every wait (graceful stop). */
  signal?: AbortSignal;
}

/** Sleep `ms` on the clock; the signal ends the sleep with CancelledError. */
export async function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await sleepOn(clock, ms, signal);
  } catch (err) {
    if (isAbortError(err)) throw new CancelledError('wait abandoned: govops is shutting down');
    throw err;
  }
}

const isNotFound = (err: unknown): boolean => err instanceof ApiError && err.statusCode === 404;

/** Status polls of one integration that may fail in a row (each after the client's retries) before its wait fails. */
export const MAX_FAILED_POLLS = 3;

/**
 * Whether the `failures`-th failed poll in a row of a wait is a missed observation (polled again at the next
 * interval) rather than the wait's failure: transient failures only (the catalogue's class), at most
 * MAX_FAILED_POLLS in a row. The poll is not the request the client retried: the next one is the schedule's.
 */
export function missedPollTolerated(err: unknown, failures: number): boolean {
  const info = classify(err);
  return info.failureClass === 'transient' && info.code !== ErrorCode.cancelled && failures <= MAX_FAILED_POLLS;
}

export function nextInterval(current: number, max: number): number {
  return Math.min(max, current * 2);
}

/**
 * Poll until the status is settled (enabled or an error status; any other keeps it polling). Returns the
 * status, or `gone` when the status endpoint answers 404 and `GET /integrations/{id}` confirms it (a status
 * endpoint that lags right after a create is not taken for a deletion).
 */
export async function waitSettled(api: ServiceApi, id: string, poll: PollSettings, waitFirst = true): Promise<string> {
  let interval = poll.initialMs;
  let last = 'unknown';
  let failedPolls = 0;
  for (let first = true; ; first = false) {
    if (!first || waitFirst) {
      const remaining = poll.deadline - poll.clock.monotonic();
      if (remaining <= 0) break;
      await sleep(poll.clock, Math.min(interval, remaining), poll.signal);
      interval = nextInterval(interval, poll.maxMs);
    }
    try {
      last = (await api.getIntegrationStatus(id).catch(async (err: unknown) => {
        if (!isNotFound(err)) throw err;
        return api.getIntegration(id); // confirm: a lagging status endpoint is not a deletion
      })).status;
      failedPolls = 0;
      if (isSettledStatus(last)) return last;
    } catch (err) {
      if (isNotFound(err)) return 'gone';
      if (!missedPollTolerated(err, ++failedPolls)) throw err;
    }
    if (poll.clock.monotonic() >= poll.deadline) break;
  }
  throw new ApplyFailure(ErrorCode.settleTimeout, `timed out waiting for integration ${id} to settle (${describeUnsettled(last)})`, { liveId: id, unsettled: describeUnsettled(last) });
}
