/**
 * The loop's clock: the one of src/util/clock.ts (the apply and the client use it too). The daemon's timers never
 * keep the process alive on their own (unref'd): its servers and its shutdown decide when it ends.
 */
import { backgroundClock, type Clock } from '../util/clock.js';

export type { Clock, TimerHandle } from '../util/clock.js';
export const systemClock: Clock = backgroundClock;
