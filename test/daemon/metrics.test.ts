/** Metrics whose label values are known exist from the start at 0, so rate/increase alerts see the first event. */
import { describe, expect, it } from 'vitest';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import type { Attempt } from '../../src/daemon/loop.js';

const RESULTS = ['applied', 'in-sync', 'drift', 'invalid', 'unreachable', 'failed'];

describe('DaemonMetrics', () => {
  it('exposes govops_reconcile_total and the duration count for every result at 0 before any reconcile', async () => {
    const m = new DaemonMetrics({ defaultMetrics: false });
    const text = await m.registry.metrics();
    for (const result of RESULTS) {
      expect(text).toContain(`govops_reconcile_total{result="${result}"} 0\n`);
      expect(text).toContain(`govops_reconcile_duration_seconds_count{result="${result}"} 0\n`);
    }
    expect(text).toContain('govops_revisions_rejected_total 0\n');
    expect(text).toContain('govops_git_fetch_failures_total 0\n');
  });

  it('counts the first failure after a restart from 0 to 1, the other results stay at 0', async () => {
    const m = new DaemonMetrics({ defaultMetrics: false });
    const failed: Attempt = {
      revision: 'abc',
      reason: 'revision',
      apply: true,
      verdict: 'failed',
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      durationSec: 0.2,
      error: 'boom',
    };
    m.recordAttempt(failed, { drift: false, ready: false });
    const text = await m.registry.metrics();
    expect(text).toContain('govops_reconcile_total{result="failed"} 1\n');
    expect(text).toContain('govops_reconcile_duration_seconds_count{result="failed"} 1\n');
    for (const result of RESULTS.filter((r) => r !== 'failed')) expect(text).toContain(`govops_reconcile_total{result="${result}"} 0\n`);
  });

  it('has no govops_last_applied_timestamp_seconds sample before an apply (a start, a standby), not 0 (1970): set once one is', async () => {
    const m = new DaemonMetrics({ defaultMetrics: false });
    const now = new Date().toISOString();
    const failed: Attempt = { revision: 'abc', reason: 'revision', apply: true, verdict: 'failed', startedAt: now, finishedAt: now, durationSec: 0.2, error: 'boom' };
    // A restart's first reconcile fails (the service is down): no apply known to this process yet.
    m.recordAttempt(failed, { drift: false, ready: false });
    let text = await m.registry.metrics();
    expect(text).toContain('# TYPE govops_last_applied_timestamp_seconds gauge\n');
    expect(text).not.toMatch(/^govops_last_applied_timestamp_seconds /m);
    m.recordAttempt({ ...failed, verdict: 'applied' }, { drift: false, ready: true, lastApplied: { revision: 'abc', at: '2026-11-28T05:00:00.000Z' } });
    text = await m.registry.metrics();
    expect(text).toContain(`govops_last_applied_timestamp_seconds ${Date.parse('2026-11-28T05:00:00.000Z') / 1000}\n`);
  });
});
