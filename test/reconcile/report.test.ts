import { describe, expect, it } from 'vitest';
import { diagnosticLine, outcomeMarkdown, outcomeTable, progressLine } from '../../src/reconcile/report.js';
import type { ResourceOutcome } from '../../src/reconcile/types.js';

const ok: ResourceOutcome = { resourceKind: 'Integration', name: 'lake', action: 'create', result: 'ok', durationMs: 1234 };
const bad: ResourceOutcome = {
  resourceKind: 'Webhook',
  name: 'hook',
  action: 'replace',
  result: 'failed',
  durationMs: 80,
  error: 'create (dry run) failed validation (422): x',
  validation: [{ name: 'Basic Connection Test', status: 'failed' }],
};

describe('apply report', () => {
  it('progress lines: counter and mark on a TTY, plain otherwise', () => {
    expect(progressLine(ok, 3, 10, true)).toBe('[3/10] ✓ Integration/lake create (1.2s)');
    expect(progressLine(bad, 4, 10, false)).toBe('Webhook/hook: replace failed (80ms): create (dry run) failed validation (422): x');
  });

  it('final table: aligned columns, failures with their validation tests, totals', () => {
    const t = outcomeTable([bad, ok]);
    expect(t.split('\n').slice(0, 3)).toEqual([
      'RESOURCE          ACTION   RESULT  DURATION',
      'Integration/lake  create   ok      1.2s',
      'Webhook/hook      replace  failed  80ms',
    ]);
    expect(t).toContain('    validation test "Basic Connection Test": failed');
    expect(t).toContain('Apply finished with failures: 1 ok, 1 failed, 0 skipped.');
    expect(outcomeMarkdown([ok])).toContain('| Integration/lake | create | ok | 1.2s |  |');
  });

  it('final table: sorted as localeCompare sorts manifest names (without starting ICU), whatever the order given', () => {
    const names = ['a', 'a-b', 'ab', 'a0', 'a-0', 'b', '0', '9a', 'z-z-9', 'lake', 'lake-2', 'lake2', 'lake-10', 'x-', 'db-prod-eu'];
    const kinds = ['Integration', 'Webhook', 'DataSource'] as const;
    const outcomes = kinds.flatMap((k) => names.map((n): ResourceOutcome => ({ resourceKind: k, name: n, action: 'create', result: 'ok', durationMs: 1 })));
    const expected = outcomes.map((o) => `${o.resourceKind}/${o.name}`).sort((a, b) => a.localeCompare(b));
    for (const order of [outcomes, [...outcomes].reverse()]) {
      const rows = outcomeTable(order).split('\n').slice(1, 1 + outcomes.length).map((l) => l.split(/\s+/)[0]);
      expect(rows).toEqual(expected);
    }
  });

  it('a settle whose wait ended first is listed with its message, not counted a failure', () => {
    const settling: ResourceOutcome = { resourceKind: 'Integration', name: 'store', action: 'settle', result: 'settling', durationMs: 60_000, error: 'integration 4 still settling after 1m (last status: creating)' };
    const t = outcomeTable([ok, settling]);
    expect(t).toContain('Integration/store: integration 4 still settling after 1m (last status: creating)');
    expect(t).toContain('Apply complete: 1 ok, 0 failed, 0 skipped, 1 still settling (the next run looks again).');
    expect(progressLine(settling, 2, 2, true)).toMatch(/^\[2\/2\] … Integration\/store settle/);
  });

  it('changes held back (skipped: the deletion guard), none failed: incomplete, not "finished with failures" with 0 failed', () => {
    const held: ResourceOutcome = { resourceKind: 'Webhook', name: 'hook', action: 'delete', result: 'skipped', durationMs: 0, error: 'blocked: refused by the mass-deletion guard' };
    expect(outcomeTable([ok, held])).toContain('Apply incomplete: 1 ok, 0 failed, 1 skipped.');
    expect(outcomeTable([bad, held])).toContain('Apply finished with failures: 0 ok, 1 failed, 1 skipped.');
  });

  it('diagnostics as file:line:col', () => {
    expect(diagnosticLine({ file: 'a.yaml', line: 3, column: 5, kind: 'Integration', name: 'x', severity: 'warning', message: 'plain literal' })).toBe(
      'a.yaml:3:5: warning: Integration/x: plain literal',
    );
  });
});
