/** A Plan value built from its changes, for unit tests of what reads plans (reports, preview). */
import type { Plan, PlanChange } from '../../src/plan/types.js';

export const planOf = (changes: PlanChange[]): Plan => ({
  formatVersion: 2,
  changes,
  summary: { create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: 0 },
  errors: [],
  warnings: [],
});
