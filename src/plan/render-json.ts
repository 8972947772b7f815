/**
 * JSON rendering of a plan: the Plan value itself (formatVersion 2), documented in docs/plan-json.md.
 * Key order is fixed by construction; secrets never enter a Plan.
 */
import type { Plan } from './types.js';

export function renderJson(plan: Plan): string {
  return `${JSON.stringify(plan, null, 2)}\n`;
}
