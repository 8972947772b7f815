/**
 * bench/growth.bench.mjs times each phase at N and 2N and reads their ratio as growth (2.00 = linear). Its
 * targeted update must then select the same share of the integrations at both sizes: a fixed count would make a
 * phase whose cost per update grows with N look linear.
 */
import { describe, expect, it } from 'vitest';
import { GROWTH_TARGET } from '../../bench/growth-target.mjs';
import { isTargeted, parseTargets } from '../../src/plan/target.js';

const targeted = (n: number): number => {
  const targets = parseTargets([GROWTH_TARGET]);
  return Array.from({ length: n }, (_, i) => `store-${i}`).filter((name) => isTargeted(targets, 'Integration', name)).length;
};

describe("the growth bench's targeted update", () => {
  it.each([2500, 5000, 10_000])('selects a tenth of %i integrations', (n) => {
    expect(targeted(n)).toBe(n / 10);
  });
});
