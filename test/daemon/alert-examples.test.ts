/**
 * The alert examples of the docs, run by Prometheus' own rule tester (`promtool test rules`) on the series the daemon
 * exports: each fires in the case it claims and not in the normal case. Without promtool the test is skipped locally
 * and fails under CI=true (.ci/run installs it).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { WebhookHealthMetrics } from '../../src/daemon/webhook-metrics.js';

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const available = promtool.status === 0;
const inCi = process.env.CI === 'true';

/** The PromQL of the code block that follows `intro` in a doc. */
function exampleAfter(doc: string, intro: string): string {
  const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8');
  const at = text.indexOf(intro);
  expect(at, `${doc}: "${intro}"`).toBeGreaterThanOrEqual(0);
  const block = /```[a-z]*\n([\s\S]*?)```/.exec(text.slice(at));
  return block![1]!.trim().replace(/\s*\n\s*/g, ' ');
}

/** `promtool test rules` of one alert over the given tests; its output ('' and status 0 when every test passes). */
function testRules(expr: string, tests: unknown[]): { status: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'govops-alerts-'));
  try {
    const rules = { groups: [{ name: 'example', rules: [{ alert: 'Example', expr }] }] };
    writeFileSync(join(dir, 'rules.json'), JSON.stringify(rules));
    writeFileSync(join(dir, 'test.json'), JSON.stringify({ rule_files: ['rules.json'], evaluation_interval: '1m', tests }));
    const r = spawnSync('promtool', ['test', 'rules', 'test.json'], { cwd: dir, encoding: 'utf8' });
    return { status: r.status, output: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('docs/webhooks.md: the alert on a dead receiver', () => {
  it("a webhook's delivery series appear with its first delivery (none before it), the premise of the cases below", async () => {
    const registry = new Registry();
    const w = new WebhookHealthMetrics(registry, false);
    expect(await registry.metrics()).not.toContain('webhook="hook"');
    w.deliveries.inc({ webhook: 'hook', event: 'tagCreated', outcome: 'failed' });
    w.lastFailure.set({ webhook: 'hook' }, 240);
    const text = await registry.metrics();
    expect(text).toContain('govops_webhook_deliveries_total{webhook="hook",event="tagCreated",outcome="failed"} 1\n');
    expect(text).toContain('govops_webhook_last_failure_timestamp_seconds{webhook="hook"} 240\n');
  });

  it('fires on the first failure of a webhook (after a start), not for a healthy one, an old failure or a recovered one', (ctx) => {
    if (!available) {
      if (inCi) expect.fail(`promtool not found (${promtool.error?.message ?? promtool.stderr}): install the Debian package prometheus`);
      ctx.skip();
    }
    const expr = exampleAfter('docs/webhooks.md', 'An alert on a dead receiver');
    const deliveries = (webhook: string, event: string, outcome: string, values: string) => ({
      series: `govops_webhook_deliveries_total{webhook="${webhook}",event="${event}",outcome="${outcome}"}`,
      values,
    });
    const last = (which: 'failure' | 'success', webhook: string, values: string) => ({
      series: `govops_webhook_last_${which}_timestamp_seconds{webhook="${webhook}"}`,
      values,
    });
    const r = testRules(expr, [
      {
        // The daemon started at 0; the receiver of `dead` fails its first delivery at 4m (createdAt 240 s).
        interval: '1m',
        input_series: [
          deliveries('dead', 'tagCreated', 'failed', '_x3 1x16'),
          last('failure', 'dead', '_x3 240x16'),
          // healthy: every delivery gets through
          deliveries('ok', 'tagCreated', 'delivered', '0+1x19'),
          last('success', 'ok', '0+60x19'),
          // its last failure is from before the start (the history's first page), a success came since
          last('failure', 'old', '-86400x19'),
          last('success', 'old', '-3600x19'),
          // failed at 4m, delivered again at 6m
          deliveries('recovered', 'tagCreated', 'failed', '_x3 1x16'),
          last('failure', 'recovered', '_x3 240x16'),
          deliveries('recovered', 'tagCreated', 'delivered', '_x5 1x14'),
          last('success', 'recovered', '_x5 360x14'),
        ],
        alert_rule_test: [
          { eval_time: '2m', alertname: 'Example', exp_alerts: [] },
          { eval_time: '6m', alertname: 'Example', exp_alerts: [{ exp_labels: { webhook: 'dead' } }] },
          { eval_time: '8m', alertname: 'Example', exp_alerts: [{ exp_labels: { webhook: 'dead' } }] },
        ],
      },
    ]);
    expect(r.output).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });
});

describe('docs/deploy.md: the alert on reconciles failing with nothing applied for an hour', () => {
  it('does not fire after a restart or a failover whose first reconciles fail, fires after an hour without an apply', (ctx) => {
    if (!available) {
      if (inCi) expect.fail(`promtool not found (${promtool.error?.message ?? promtool.stderr}): install the Debian package prometheus`);
      ctx.skip();
    }
    const expr = exampleAfter('docs/deploy.md', 'reconciles failing with nothing applied for an hour');
    const at = (instance: string) => `instance="${instance}",job="govops"`;
    const r = testRules(expr, [
      {
        interval: '1m',
        input_series: [
          // restarted at 0 with the service down: every reconcile fails, no apply by this process (no sample)
          { series: `process_start_time_seconds{${at('restarted')}}`, values: '0x100' },
          { series: `govops_reconcile_total{${at('restarted')},result="failed"}`, values: '0+1x100' },
          // applies every few minutes and fails in between: working
          { series: `process_start_time_seconds{${at('working')}}`, values: '-86400x100' },
          { series: `govops_last_applied_timestamp_seconds{${at('working')}}`, values: '0+60x100' },
          { series: `govops_reconcile_total{${at('working')},result="failed"}`, values: '0+1x100' },
          // applied last at 0, healthy since (no failures)
          { series: `process_start_time_seconds{${at('idle')}}`, values: '-86400x100' },
          { series: `govops_last_applied_timestamp_seconds{${at('idle')}}`, values: '0x100' },
          { series: `govops_reconcile_total{${at('idle')},result="failed"}`, values: '0x100' },
        ],
        alert_rule_test: [
          { eval_time: '10m', alertname: 'Example', exp_alerts: [] },
          { eval_time: '90m', alertname: 'Example', exp_alerts: [{ exp_labels: { instance: 'restarted', job: 'govops' } }] },
        ],
      },
    ]);
    expect(r.output).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });
});
