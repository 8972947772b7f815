/**
 * The plan's notes (`blocked`, `reasons`, `warnings`) are `{code, message}` values: every decision reads the
 * code. Each test here changes a note's text (or gives one the text another code used to be told by) and shows
 * the decision follows the code.
 */
import { describe, expect, it } from 'vitest';
import { blockedBesidesManualStep, blockedByManualStep, relocateChange } from '../../src/plan/manual-steps.js';
import { planChanges } from '../../src/plan/planner.js';
import { renderJson } from '../../src/plan/render-json.js';
import { renderText } from '../../src/plan/render-text.js';
import { applySuspension } from '../../src/plan/suspend.js';
import { applyTargets } from '../../src/plan/target.js';
import type { DesiredResource, Plan, PlanOptions, ResourceChange } from '../../src/plan/types.js';
import { finish, warningsAbout } from '../../src/preview/result.js';
import { PREVIEW_FORMAT_VERSION, PREVIEW_MARKER, type LiveFacts, type PreviewResult } from '../../src/preview/types.js';
import type { LiveIntegration } from '../../src/api/types.js';
import type { GovopsState } from '../../src/state/types.js';
import { SHAPES, integration, liveOf, owned, sqlConfig, stateWith } from './fixtures.js';

const OPTS: PlanOptions = { prune: false, allowReplace: false };
function plan(desired: DesiredResource[], live: LiveIntegration[], state: GovopsState, options: Partial<PlanOptions> = {}): Plan {
  return planChanges({ shapes: SHAPES, desired, live: { integrations: live, webhooks: [] }, state, options: { ...OPTS, ...options } });
}

const awaitingGate = { status: 'awaiting' as const, scripts: [{ phase: 'edit' as const, command: 'govops scripts lake --phase edit m.yaml' }] };
const change = (over: Partial<ResourceChange>): ResourceChange => ({
  resourceKind: 'Integration',
  name: 'lake',
  action: 'update',
  adopt: false,
  liveId: '4',
  changes: [],
  reasons: [],
  source: { file: 'm.yaml', line: 1, column: 1 },
  ...over,
});

describe('blocked: awaiting a manual step is told by its code', () => {
  it('a wait for the manual step with any text is not shown as another block; another block with the old text is', () => {
    const waiting = change({ manualStep: awaitingGate, blocked: { code: 'awaiting-manual-step', message: 'the platform script has not run yet' } });
    expect(blockedByManualStep(waiting.blocked!)).toBe(true);
    expect(blockedBesidesManualStep(waiting)).toBeUndefined();
    expect(renderText({ formatVersion: 2, changes: [waiting], summary: { create: 0, update: 1, replace: 0, delete: 0, adopt: 0, noop: 0 }, errors: [], warnings: [] } as Plan)).not.toContain('! blocked:');

    const other = change({ manualStep: awaitingGate, blocked: { code: 'replace-not-allowed', message: 'awaiting manual step (so the text says): run with --allow-replace' } });
    expect(blockedByManualStep(other.blocked!)).toBe(false);
    expect(blockedBesidesManualStep(other)).toBe('awaiting manual step (so the text says): run with --allow-replace');
  });

  it('the planner marks the gate with its code; relocating the file keeps the code', () => {
    const d = integration('lake', 'lakehouse', { workspaceUrl: 'https://lake.example.com', httpPath: '/sql/1', token: 't' }, { autoBootstrap: false });
    const c = plan([d], [], stateWith()).changes[0]!;
    expect(c.blocked?.code).toBe('awaiting-manual-step');
    const moved = relocateChange(c, 'manifests/lake.yaml');
    expect(moved.blocked).toEqual({ code: 'awaiting-manual-step', message: expect.stringContaining('manifests/lake.yaml') });
  });
});

describe('reasons: govops/delete is told by its code', () => {
  it('a suspended change drops the delete-requested reason whatever its text, and keeps another reason with that text', () => {
    const c = change({
      action: 'delete',
      reasons: [
        { code: 'delete-requested', message: 'the manifest asks for the delete' },
        { code: 'not-owned', message: 'annotation govops/delete: "true" (a reason with the old text, another code)' },
      ],
    });
    const [s] = applySuspension([c], new Set(['Integration/lake']), []);
    expect(s!.reasons.map((r) => r.code)).toEqual(['not-owned', 'suspended']);
  });

  it('a noop marked govops/delete gives a delete-not-done warning about its resource', () => {
    const marked = integration('old', 'sql_analytics', sqlConfig('old.example.com'), { annotations: { 'govops/delete': 'true' } });
    const p = plan([marked], [liveOf(marked, '4')], stateWith(owned(marked, '4')));
    expect(p.changes[0]!.reasons).toContainEqual({ code: 'delete-requested', message: 'annotation govops/delete: "true"' });
    expect(p.warnings).toEqual([
      {
        code: 'delete-not-done',
        resource: { kind: 'Integration', name: 'old' },
        message: 'Integration/old is marked govops/delete but is not deleted: run with --prune to delete it',
      },
    ]);
  });
});

describe('--only: a plan error is about the resources it names as values, not in its text', () => {
  it('an error about an untargeted resource becomes a warning, whatever its text names; one about a targeted resource stays', () => {
    const changes = [change({ name: 'a' }), change({ name: 'b' })];
    const t = applyTargets(
      changes,
      [
        { message: 'two live matches (the text names Integration/a)', about: [{ kind: 'Integration', name: 'b' }] },
        { message: 'a problem worded without any resource', about: [{ kind: 'Integration', name: 'a' }] },
        { message: 'about nothing in particular', about: [] },
      ],
      ['Integration/a'],
    );
    expect(t.errors.map((e) => e.message)).toEqual(['a problem worded without any resource', 'about nothing in particular']);
    expect(t.warnings.map((w) => w.message)).toEqual(['outside --only: two live matches (the text names Integration/a)']);
  });
});

describe('warnings name their resource; plan JSON format 2 carries the codes', () => {
  it('the preview keeps the warnings whose resource it touches, read from the resource and not the text', () => {
    const warnings = [
      { code: 'orphan' as const, resource: { kind: 'Integration' as const, name: 'a' }, message: 'something about a, in any words' },
      { code: 'duplicate' as const, resource: { kind: 'Webhook' as const, name: 'b' }, message: 'Integration/a is named here, but this is about b' },
      { code: 'targeting' as const, message: 'Integration/a plan-wide, no resource' },
    ];
    expect(warningsAbout(warnings, new Set(['Integration/a'])).map((w) => w.code)).toEqual(['orphan']);
    expect(warningsAbout(warnings, new Set(['Webhook/b'])).map((w) => w.code)).toEqual(['duplicate']);
  });

  it('an orphan warning has its code and resource in the JSON', () => {
    const gone = integration('old', 'sql_analytics', sqlConfig('old.example.com'));
    const j = JSON.parse(renderJson(plan([], [liveOf(gone, '4')], stateWith(owned(gone, '4')))));
    expect(j.formatVersion).toBe(2);
    expect(j.warnings).toEqual([
      { code: 'orphan', resource: { kind: 'Integration', name: 'old' }, message: 'Integration/old is managed by govops but has no manifest: run with --prune to delete it' },
    ]);
  });
});

describe('preview: blocked changes are sorted by code', () => {
  const result = (live: LiveFacts): PreviewResult =>
    finish({
      formatVersion: PREVIEW_FORMAT_VERSION,
      marker: PREVIEW_MARKER,
      mode: 'live',
      valid: true,
      diagnostics: [],
      unknownSecrets: [],
      summary: { pr: { added: 0, changed: 0, renamed: 0, removed: 0 }, drift: 0, manualSteps: 0 },
      warnings: [],
      resources: [{ resourceKind: 'Integration', name: 'lake', change: 'changed', fields: [], live }],
      drift: [],
      changed: false,
      exitCode: 0,
    });
  const facts = (blocked: string, blockedCode: LiveFacts['blockedCode']): LiveFacts => ({ action: 'delete', adopt: false, reasons: [], changes: [], forcesReplace: [], blocked, blockedCode });

  it('a refusal of the mass-deletion guard is no per-resource warning whatever its text; another block with the guard text is', () => {
    const guard = result(facts('held back (any words)', 'deletion-guard'));
    expect(guard.warnings.filter((w) => w.kind === 'blocked')).toEqual([]);
    expect(guard.summary.blocked).toBe(1);
    const other = result(facts('refused by the mass-deletion guard: (but the code says otherwise)', 'needs-delete-credentials'));
    expect(other.warnings.filter((w) => w.kind === 'blocked').map((w) => w.resource)).toEqual(['Integration/lake']);
  });

  it('a wait for a manual step is not counted as blocked whatever its text; another block with that text is', () => {
    expect(result(facts('the script has not run', 'awaiting-manual-step')).summary.blocked).toBe(0);
    expect(result(facts('awaiting manual step (the text only)', 'replace-not-allowed')).summary.blocked).toBe(1);
  });
});
