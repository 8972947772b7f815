import { describe, expect, it } from 'vitest';
import { planChanges } from '../../src/plan/planner.js';
import { renderJson } from '../../src/plan/render-json.js';
import { renderMarkdown } from '../../src/plan/render-markdown.js';
import { renderText, summaryLine } from '../../src/plan/render-text.js';
import type { Plan } from '../../src/plan/types.js';
import { integration, liveOf, liveWebhookOf, owned, sqlConfig, stateWith, webhook, SHAPES } from './fixtures.js';

function mixedPlan(): Plan {
  const created = integration('new-sql', 'sql_analytics', sqlConfig('new.example.com', 'sekret-new'));
  const before = integration('sql', 'sql_analytics', sqlConfig('db.example.com', 'sekret-old'));
  const updated = integration('sql', 'sql_analytics', { ...sqlConfig('db.example.com', 'sekret-rotated'), port: 1500 });
  const adoptee = integration('trino', 'distributed_sql', {});
  const gone = integration('gone', 'lakehouse', { workspaceUrl: 'https://gone.example.com', httpPath: '/p', token: 'tok-gone' });
  const hookOld = webhook('hook', { secret: 'hook-sekret' });
  const hookNew = webhook('hook', { secret: 'hook-sekret', url: 'https://hooks.example.com/v2' });
  return planChanges({ shapes: SHAPES,
    desired: [created, updated, adoptee, hookNew],
    live: { integrations: [liveOf(before, '1'), liveOf(adoptee, '2'), liveOf(gone, '3')], webhooks: [liveWebhookOf(hookOld, '9')] },
    state: stateWith(owned(before, '1'), owned(gone, '3'), owned(hookOld, '9')),
    options: { prune: true, allowReplace: false },
  });
}

describe('plan renderers', () => {
  it('text: Terraform-like symbols, field diffs, (sensitive), summary line, no secret values', () => {
    const p = mixedPlan();
    const text = renderText(p);
    expect(text).toMatch(/^ {2}\+ Integration\/new-sql \(sql_analytics\)$/m);
    expect(text).toMatch(/^ {2}~ Integration\/sql \(sql_analytics\)$/m);
    expect(text).toMatch(/~ config\.port: 1433 -> 1500/);
    expect(text).toMatch(/~ config\.password = \(sensitive\)/);
    expect(text).toMatch(/^ {2}- Integration\/gone \(lakehouse\)$/m);
    expect(text).toMatch(/^ <= Integration\/trino \(distributed_sql\)$/m);
    expect(text).toMatch(/^-\/\+ Webhook\/hook$/m);
    expect(text).toMatch(/~ url: "https:\/\/hooks\.example\.com\/hook" -> "https:\/\/hooks\.example\.com\/v2" {3}# forces replacement/);
    expect(text).toContain('Plan: 1 to create, 1 to update, 1 to replace, 1 to delete, 1 to adopt.');
    expect(text).not.toContain('\u001b['); // no color unless asked
    expect(renderText(p, { color: true })).toContain('\u001b[32m');
    for (const s of ['sekret-new', 'sekret-old', 'sekret-rotated', 'tok-gone', 'hook-sekret']) expect(text).not.toContain(s);
  });

  it('text: no changes', () => {
    const d = integration('sql', 'sql_analytics', sqlConfig());
    const p = planChanges({ shapes: SHAPES, desired: [d], live: { integrations: [liveOf(d, '1')], webhooks: [] }, state: stateWith(owned(d, '1')), options: { prune: false, allowReplace: false } });
    expect(renderText(p)).toBe('No changes: the service matches the manifests.\nPlan: 0 to create, 0 to update, 0 to replace, 0 to delete, 0 to adopt.\n');
  });

  it('text: a plan with errors does not say govops will perform its changes (nothing is applied)', () => {
    // two live webhooks share the manifest's name: a plan error; the changes listed are not carried out
    const h = webhook('dup');
    const p = planChanges({ shapes: SHAPES, desired: [h, webhook('other')], live: { integrations: [], webhooks: [liveWebhookOf(h, '6'), liveWebhookOf(h, '7')] }, state: stateWith(), options: { prune: false, allowReplace: false } });
    expect(p.errors).toHaveLength(1);
    const text = renderText(p);
    expect(text).not.toContain('govops will perform the following actions');
    expect(text).toContain('Nothing is applied while the plan has errors. Once they are fixed, govops would perform the following actions:');
    expect(renderText(mixedPlan())).toContain('govops will perform the following actions:');
  });

  it('json: the documented, stable shape', () => {
    const p = mixedPlan();
    const j = JSON.parse(renderJson(p));
    expect(Object.keys(j)).toEqual(['formatVersion', 'changes', 'summary', 'errors', 'warnings']);
    expect(j.formatVersion).toBe(2);
    const sql = j.changes.find((c: { name: string }) => c.name === 'sql');
    expect(sql).toMatchObject({ resourceKind: 'Integration', action: 'update', adopt: false, liveId: '1', integrationType: 'sql_analytics' });
    expect(sql.changes).toContainEqual({ path: 'config.password', sensitive: true, forcesReplace: false });
    expect(renderJson(p)).not.toMatch(/sekret|tok-gone/);
  });

  it('markdown: summary table and collapsible details', () => {
    const md = renderMarkdown(mixedPlan());
    expect(md).toMatch(/^### govops plan/);
    expect(md).toMatch(/\| `\+` \| Integration\/new-sql \| sql_analytics \| will be created \|/);
    expect(md).toMatch(/\*\*Plan: 1 to create, 1 to update, 1 to replace, 1 to delete, 1 to adopt\.\*\*/);
    expect(md).toMatch(/<details><summary>Details<\/summary>[\s\S]*```diff[\s\S]*<\/details>/);
    expect(md).not.toMatch(/sekret|tok-gone/);
  });

  it('summary line', () => {
    expect(summaryLine({ create: 2, update: 1, replace: 0, delete: 0, adopt: 1, noop: 4 })).toBe(
      'Plan: 2 to create, 1 to update, 0 to replace, 0 to delete, 1 to adopt.',
    );
  });
});
