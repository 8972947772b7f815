/** `govops run` flags → daemon settings (defaults from the issue, --listen forms, secrets from files). */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { settingsFrom } from '../../src/cli/commands/run-action.js';
import { Cleanup } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const defaults = {
  branch: 'main',
  path: '.',
  interval: '60s',
  resync: '5m',
  concurrency: '8',
  timeout: '10m',
  listen: ':8080',
  state: '.govops/state.json',
  grace: '30s',
};

describe('govops run settings', () => {
  it('defaults: fetch every 60s, resync every 5m, listen on every interface :8080, work dir next to the state', () => {
    const s = settingsFrom({ ...defaults, repo: 'https://example.com/r.git' }, {});
    expect(s).toMatchObject({ intervalMs: 60_000, resyncMs: 300_000, selfHeal: false, prune: false, listen: { host: '0.0.0.0', port: 8080 } });
    expect(s.workdir).toBe(join('.govops', 'work'));
    expect(s.hookSecret).toBeUndefined();
  });

  it('takes HOST:PORT and :PORT, and rejects anything else with a clear message', () => {
    expect(settingsFrom({ ...defaults, dir: 'm', listen: '127.0.0.1:9090' }, {}).listen).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(settingsFrom({ ...defaults, dir: 'm', listen: ':0' }, {}).listen).toEqual({ host: '0.0.0.0', port: 0 });
    expect(() => settingsFrom({ ...defaults, dir: 'm', listen: '8080' }, {})).toThrow(/--listen/);
    expect(() => settingsFrom({ ...defaults, dir: 'm', interval: 'soon' }, {})).toThrow(/--interval/);
    expect(() => settingsFrom({ ...defaults, dir: 'm', maxDeletes: '-1' }, {})).toThrow(/--max-deletes/);
    expect(() => settingsFrom({ ...defaults, dir: 'm', repo: 'x' }, {})).toThrow(/cannot be used together/);
  });

  it('reads the push notification secret from the environment or a file (the file wins)', async () => {
    expect(settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_GIT_WEBHOOK_SECRET: 'from-env' }).hookSecret).toBe('from-env');
    const dir = await cleanup.tmp('govops-settings-');
    const file = join(dir, 'secret');
    await writeFile(file, 'from-file\n');
    expect(settingsFrom({ ...defaults, dir: 'm', gitWebhookSecretFile: file }, { GOVOPS_GIT_WEBHOOK_SECRET: 'from-env' }).hookSecret).toBe('from-file');
    expect(() => settingsFrom({ ...defaults, dir: 'm', gitWebhookSecretFile: join(dir, 'nope') }, {})).toThrow(/cannot read/);
  });
});
