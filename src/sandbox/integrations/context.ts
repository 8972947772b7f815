/** What the integration routes share: the store, failure rules, event emission and the clock. */
import type { Behaviours } from '../behaviours.js';
import type { Caller } from '../http.js';
import type { Failures } from './failures.js';
import type { IntegrationStore } from './store.js';

export interface IntegrationContext {
  store: IntegrationStore;
  failures: Failures;
  now: () => number;
  behaviours: Behaviours;
  emit(notificationType: string, metadata: Record<string, unknown>, actor?: Caller | { userId: number; userName: string }): void;
}
