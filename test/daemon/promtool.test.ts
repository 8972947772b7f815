/**
 * /metrics as Prometheus' own linter reads it: `promtool check metrics` (Debian package `prometheus`; .ci/run
 * installs it when missing). Without promtool the test is skipped locally and fails under CI=true.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { Notifier } from '../../src/daemon/notify.js';
import { startHttpServer } from '../../src/daemon/server.js';
import { silentLogger } from '../../src/log.js';
import { WebhookHealthMetrics, codeLabel } from '../../src/daemon/webhook-metrics.js';

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const available = promtool.status === 0;
const inCi = process.env.CI === 'true';

/** Every metric the daemon registers, with a series in each labelled one, as GET /metrics serves it. */
async function exposition(): Promise<string> {
  const m = new DaemonMetrics();
  const w = new WebhookHealthMetrics(m.registry, true);
  new Notifier({ targets: [], logger: pino({ level: 'silent' }), registry: m.registry, observe: false });
  m.onRequest({ method: 'GET', route: '/integrations', status: 200, durationMs: 12, attempt: 0 });
  m.onGitFetch(0.3, false);
  m.lastAppliedRevision.set({ revision: 'git:main@0123abc' }, 1);
  m.resources.set({ kind: 'webhook', sync_state: 'synced' }, 2);
  w.deliveries.inc({ webhook: 'hook', event: 'other', outcome: 'failed' });
  w.failures.inc({ webhook: 'hook', code: codeLabel({ statusCode: 500, responseCode: 'ESOCKETTIMEDOUT' }) });
  w.lastFailure.set({ webhook: 'hook' }, 1);
  w.lastSuccess.set({ webhook: 'hook' }, 1);
  w.autoRetries.inc({ webhook: 'hook', result: 'failed' });
  w.autoRetryExhausted.inc({ webhook: 'hook' });
  w.pollDuration.observe(0.1);
  const http = await startHttpServer(
    { host: '127.0.0.1', port: 0 },
    { ready: () => ({ ready: true }), status: () => ({}), registry: m.registry, hookSecret: undefined, onPush: () => false },
    silentLogger(),
  );
  try {
    return await (await fetch(`${http.url}/metrics`)).text();
  } finally {
    await http.close();
  }
}

describe('promtool check metrics', () => {
  it("accepts the daemon's whole exposition, prom-client's default metrics included", async (ctx) => {
    if (!available) {
      // loudly under CI: .ci/run installs it
      if (inCi) expect.fail(`promtool not found (${promtool.error?.message ?? promtool.stderr}): install the Debian package prometheus`);
      ctx.skip();
    }
    const text = await exposition();
    expect(text).toContain('nodejs_active_handles{');
    expect(text).toContain('govops_notifications_total{');
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('the code label of govops_webhook_delivery_failures_total', () => {
  it('is a known transport code, HTTP <status>, or other: never the service free text', () => {
    expect(codeLabel({ statusCode: 500, responseCode: 'ESOCKETTIMEDOUT' })).toBe('ESOCKETTIMEDOUT');
    expect(codeLabel({ statusCode: 404 })).toBe('HTTP 404');
    expect(codeLabel({ statusCode: 500, responseCode: 'receiver said: quota 8f3a exceeded' })).toBe('other');
    expect(codeLabel({ statusCode: 500, responseCode: 'E'.repeat(300) })).toBe('other');
    expect(codeLabel({ statusCode: 0 })).toBe('other');
    expect(codeLabel({ statusCode: 123456 })).toBe('other');
    const labels = new Set(Array.from({ length: 1000 }, (_, i) => codeLabel({ statusCode: 500, responseCode: `ERR_${i}` })));
    expect([...labels]).toEqual(['other']);
  });
});
