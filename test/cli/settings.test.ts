/** The settings objects built once from the flags (src/cli/settings.ts, apply-options.ts): one normal form, usage errors named. */
import { describe, expect, it } from 'vitest';
import { applyTuningFrom } from '../../src/cli/apply-options.js';
import { planSettingsFrom, savedPlanSettings, sourceSettingsFrom } from '../../src/cli/settings.js';

describe('settings from the flags', () => {
  it('plan settings: switches off are left out, manualSteps always set; a saved plan reads back the same object', () => {
    expect(planSettingsFrom({})).toEqual({ prune: false, allowReplace: false, manualSteps: 'require' });
    // --no-adopt is commander's `adopt: false` (true, its default, when not given)
    expect(planSettingsFrom({ adopt: true })).toEqual({ prune: false, allowReplace: false, manualSteps: 'require' });
    const full = planSettingsFrom({ prune: true, allowReplace: true, maxDeletes: '3', allowEmpty: true, resendSecrets: true, manualSteps: 'trust', only: ['Webhook/a-*'], adopt: false });
    expect(full).toEqual({ prune: true, allowReplace: true, maxDeletes: 3, allowEmpty: true, resendSecrets: true, manualSteps: 'trust', only: ['Webhook/a-*'], noAdopt: true });
    // what `plan --out` saves is what `apply FILE` plans with
    expect(savedPlanSettings(JSON.parse(JSON.stringify(full)))).toEqual(full);
    expect(savedPlanSettings({ prune: false, allowReplace: false, only: [] })).toEqual({ prune: false, allowReplace: false, manualSteps: 'require' });
  });

  it('a bad --max-deletes or --only is a usage error naming the flag, before anything is read', () => {
    expect(() => planSettingsFrom({ maxDeletes: '-1' })).toThrow(/--max-deletes/);
    expect(() => planSettingsFrom({ only: ['Nope/x'] })).toThrow(/Nope/);
  });

  it('apply tuning: --concurrency and --timeout with the polling and batch flags, in one object', () => {
    expect(applyTuningFrom({ concurrency: '4', timeout: '2m', pollMin: '10ms' })).toMatchObject({
      concurrency: 4,
      timeoutMs: 120_000,
      pollIntervalMs: 10,
      webhookBatch: { maxItems: 500, maxBytes: 256 * 1024 },
    });
    expect(applyTuningFrom({})).not.toHaveProperty('concurrency');
    expect(() => applyTuningFrom({ concurrency: '0' })).toThrow(/--concurrency/);
    expect(() => applyTuningFrom({ timeout: 'soon' })).toThrow(/--timeout/);
  });

  it('--timeout 0s is a usage error (every resource of every apply, and every reconcile of run, was skipped: "the apply --timeout passed before it started")', () => {
    expect(() => applyTuningFrom({ timeout: '0s' })).toThrow(/--timeout must be greater than zero/);
    expect(() => applyTuningFrom({ timeout: '0.1ms' })).toThrow(/--timeout must be greater than zero/);
    expect(applyTuningFrom({ timeout: '1ms' }).timeoutMs).toBe(1);
  });

  it('source settings: the paths given (default .) under the working folder', () => {
    expect(sourceSettingsFrom([], {}, '/r')).toMatchObject({ root: '/r', paths: ['.'] });
    expect(sourceSettingsFrom(['a', 'b'], {}, '/r')).toMatchObject({ root: '/r', paths: ['a', 'b'] });
    expect(sourceSettingsFrom(['a'], {}, '/r').stream).toBeUndefined();
  });
});
