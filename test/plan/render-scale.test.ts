/** A plan of many changes as a person reads it: the summary first too, names in natural order, repeated notes once. */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../src/plan/planner.js';
import { renderText, summaryLine } from '../../src/plan/render-text.js';
import { naturalCompare } from '../../src/util/natural.js';
import { integration, liveOf, owned, sqlConfig, stateWith, SHAPES } from './fixtures.js';

function bigPlan(n: number) {
  const names = Array.from({ length: n }, (_, i) => `col-${i + 1}`).sort(); // text order: col-1, col-10, col-100, ...
  const desired = names.map((name) => integration(name, 'sql_analytics', { ...sqlConfig(`${name}.example.com`), port: 1500 }));
  const before = names.map((name) => integration(name, 'sql_analytics', sqlConfig(`${name}.example.com`)));
  return planChanges({
    shapes: SHAPES,
    desired,
    live: { integrations: before.map((d, i) => liveOf(d, String(i + 1))), webhooks: [] },
    state: stateWith(...before.map((d, i) => owned(d, String(i + 1)))),
    options: { prune: false, allowReplace: false },
  });
}

describe('a plan of 120 changes as text', () => {
  const plan = bigPlan(120);
  const text = renderText(plan);
  const lines = text.trimEnd().split('\n');

  it('opens with the summary and still ends with it', () => {
    expect(plan.summary.update).toBe(120);
    expect(lines[0]).toBe(summaryLine(plan.summary));
    expect(lines).toContain(summaryLine(plan.summary));
    expect(lines.filter((l) => l === summaryLine(plan.summary))).toHaveLength(2);
  });

  it('lists the names in natural order (col-2 before col-10 before col-101)', () => {
    const listed = [...text.matchAll(/^ {2}~ Integration\/(col-\d+) /gm)].map((m) => m[1]!);
    expect(listed).toHaveLength(120);
    expect(listed.slice(0, 3)).toEqual(['col-1', 'col-2', 'col-3']);
    expect(listed.indexOf('col-2')).toBeLessThan(listed.indexOf('col-10'));
    expect(listed.indexOf('col-10')).toBeLessThan(listed.indexOf('col-101'));
  });

  it('prints a note shared by many resources once, with how many', () => {
    // adopted without govops state: every password is masked and has no fingerprint, the same note on each
    const adopted = Array.from({ length: 30 }, (_, i) => integration(`db-${i + 1}`, 'sql_analytics', sqlConfig(`db-${i + 1}.example.com`)));
    const p = planChanges({
      shapes: SHAPES,
      desired: adopted,
      live: { integrations: adopted.map((d, i) => liveOf(d, String(i + 1))), webhooks: [] },
      state: stateWith(),
      options: { prune: false, allowReplace: false },
    });
    const notes = p.changes.map((c) => c.notComparable).filter((n) => n !== undefined);
    expect(notes).toHaveLength(30);
    const t = renderText(p);
    const line = /^\s*(\? config\.password.*: cannot be compared.*)$/m.exec(t)![1]!;
    expect(t.split(line).length - 1).toBe(1);
    expect(t).toContain('30 resources: Integration/db-1, Integration/db-2, Integration/db-3, Integration/db-4, Integration/db-5, and 25 more');
  });

  it('a short plan keeps its summary at the end only', () => {
    const small = renderText(bigPlan(3));
    expect(small.startsWith('govops will perform the following actions:')).toBe(true);
  });
});

describe('naturalCompare', () => {
  it('orders digit runs by value, the rest by code unit, totally', () => {
    const sorted = ['col-10', 'col-2', 'col-101', 'col-1', 'a-01', 'a-1', 'b', 'a', 'col-9x', 'col-9'].sort(naturalCompare);
    expect(sorted).toEqual(['a', 'a-01', 'a-1', 'b', 'col-1', 'col-2', 'col-9', 'col-9x', 'col-10', 'col-101']);
    expect(naturalCompare('x', 'x')).toBe(0);
  });
});
