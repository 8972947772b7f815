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
});
