/**
 * Waiting for the service: poll an integration's status with an adaptive interval (start small,
 * double, cap) until it leaves the transitional statuses, or until it is gone (404), or the deadline.
 */
import type { ServiceApi } from '../api/client-types.js';
import { ApiError } from '../errors.js';
import { TRANSITIONAL_STATUSES } from '../service/kinds.js';
import { ApplyFailure } from './validation.js';

export interface PollSettings {
  /** Epoch ms after which waiting fails. */
  deadline: number;
  initialMs: number;
  maxMs: number;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

export function nextInterval(current: number, max: number): number {
  return Math.min(max, current * 2);
}

/**
 * Poll until the status is no longer transitional. Returns the status, or `gone` when the status
 * endpoint answers 404 (deleted).
 */
export async function waitSettled(api: ServiceApi, id: string, poll: PollSettings, waitFirst = true): Promise<string> {
  let interval = poll.initialMs;
  let last = 'unknown';
  for (let first = true; ; first = false) {
    if (!first || waitFirst) {
      const remaining = poll.deadline - Date.now();
      if (remaining <= 0) break;
      await sleep(Math.min(interval, remaining));
      interval = nextInterval(interval, poll.maxMs);
    }
    try {
      const s = await api.getIntegrationStatus(id);
      last = s.status;
      if (!TRANSITIONAL_STATUSES.has(s.status)) return s.status;
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 404) return 'gone';
      throw err;
    }
    if (Date.now() >= poll.deadline) break;
  }
  throw new ApplyFailure(`timed out waiting for integration ${id} to settle (last status: ${last})`, undefined, id);
}
