/** Duration flags above Node's timer limit (2^31-1 ms, 24.8 days) are refused: setTimeout made them about 1 ms. */
import { describe, expect, it } from 'vitest';
import { graceFrom, settingsFrom } from '../../src/cli/commands/run-action.js';
import { applyTuningFrom } from '../../src/cli/apply-options.js';
import { RUN_FLAG_DEFAULTS as defaults } from './helpers.js';

describe('duration flags past the timer limit', () => {
  it('govops run refuses --interval, --resync, --git-timeout, --render-timeout, --timeout, --grace over 24.8 days', () => {
    const run = (extra: Record<string, string>) => () => settingsFrom({ ...defaults, dir: 'm', ...extra }, {});
    expect(run({ interval: '25d' })).toThrow(/--interval 25d: must be at most 24d/);
    expect(run({ resync: '30d' })).toThrow(/--resync 30d: must be at most/);
    expect(run({ gitTimeout: '100d' })).toThrow(/--git-timeout 100d: must be at most/);
    expect(run({ render: 'kustomize build', renderTimeout: '25d' })).toThrow(/--render-timeout 25d: must be at most/);
    expect(run({ timeout: '25d' })).toThrow(/--timeout 25d: must be at most/);
    expect(() => graceFrom({ grace: '25d' })).toThrow(/--grace 25d: must be at most/);
    // the longest a timer can wait is still taken
    expect(settingsFrom({ ...defaults, dir: 'm', resync: '24d' }, {}).resyncMs).toBe(24 * 86_400_000);
    expect(graceFrom({ grace: '30s' })).toBe(30_000);
  });

  it('govops apply refuses --timeout / --poll-max over 24.8 days', () => {
    expect(() => applyTuningFrom({ timeout: '25d' })).toThrow(/--timeout 25d: must be at most/);
    expect(() => applyTuningFrom({ pollMax: '25d' })).toThrow(/--poll-max 25d: must be at most/);
  });
});
