/** `govops run` flags → daemon settings (defaults from the issue, --listen forms, secrets from files). */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { settingsFrom } from '../../src/cli/commands/run-action.js';
import { githubSignature, verifyPush } from '../../src/daemon/hooks.js';
import { Cleanup, RUN_FLAG_DEFAULTS as defaults } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('govops run settings', () => {
  it('--git-timeout sets the Git source\'s per-command timeout (a first fetch longer than 120s could never finish)', () => {
    expect(settingsFrom({ ...defaults, repo: 'https://git.example/r.git' }, {}).gitTimeoutMs).toBe(120_000);
    expect(settingsFrom({ ...defaults, repo: 'https://git.example/r.git', gitTimeout: '10m' }, {}).gitTimeoutMs).toBe(600_000);
    expect(() => settingsFrom({ ...defaults, repo: 'https://git.example/r.git', gitTimeout: 'soon' }, {})).toThrow(/--git-timeout/);
  });

  it('GOVOPS_STATUS_TOKEN of spaces only is refused (it left /status open); a token is trimmed', () => {
    expect(() => settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_STATUS_TOKEN: '   ' })).toThrow(/GOVOPS_STATUS_TOKEN holds only spaces/);
    expect(settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_STATUS_TOKEN: ' tok-1234 ' }).statusToken).toBe('tok-1234');
    expect(settingsFrom({ ...defaults, dir: 'm' }, {}).statusToken).toBeUndefined();
  });

  it('GOVOPS_GIT_WEBHOOK_SECRET is trimmed as the secret file is (a Kubernetes Secret made from a file ends in a newline), and spaces only are refused', () => {
    // The Git host signs with the secret as typed; with the newline kept every push notification was 401 (bad signature).
    const hookSecret = settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_GIT_WEBHOOK_SECRET: 'push-secret-1234\n' }).hookSecret;
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const headers = { 'x-hub-signature-256': githubSignature('push-secret-1234', body), 'x-github-event': 'push', 'content-type': 'application/json' };
    expect(verifyPush(headers, Buffer.from(body), hookSecret)).toMatchObject({ ok: true, kind: 'push' });
    expect(verifyPush({ 'x-gitlab-token': 'push-secret-1234', 'x-gitlab-event': 'Push Hook' }, Buffer.from(body), hookSecret)).toMatchObject({ ok: true, kind: 'push' });
    expect(() => settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_GIT_WEBHOOK_SECRET: '  \n' })).toThrow(/GOVOPS_GIT_WEBHOOK_SECRET holds only spaces/);
    expect(() => settingsFrom({ ...defaults, dir: 'm', gitWebhookSecret: ' ' }, {})).toThrow(/--git-webhook-secret holds only spaces/);
    expect(settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_GIT_WEBHOOK_SECRET: '' }).hookSecret).toBeUndefined();
  });

  it('a secret file wins over a GOVOPS_GIT_WEBHOOK_SECRET of spaces', async () => {
    const file = join(await cleanup.tmp('govops-hook-'), 'secret');
    await writeFile(file, 'from-file\n');
    expect(settingsFrom({ ...defaults, dir: 'm', gitWebhookSecretFile: file }, { GOVOPS_GIT_WEBHOOK_SECRET: ' ' }).hookSecret).toBe('from-file');
  });

  it('defaults: fetch every 60s, resync every 5m, listen on every interface :8080, work dir next to the state', () => {
    const s = settingsFrom({ ...defaults, repo: 'https://example.com/r.git' }, {});
    expect(s).toMatchObject({ intervalMs: 60_000, resyncMs: 300_000, selfHeal: false, listen: { host: '0.0.0.0', port: 8080 } });
    // one settings object per concern, built once from the flags and passed down whole
    expect(s.plan).toEqual({ prune: false, allowReplace: false, manualSteps: 'require' });
    // --no-adopt (commander's `adopt: false`, or GOVOPS_NO_ADOPT) reaches the planner's options
    expect(settingsFrom({ ...defaults, dir: 'm', adopt: false }, {}).plan).toEqual({ prune: false, allowReplace: false, manualSteps: 'require', noAdopt: true });
    expect(s.tuning).toMatchObject({ concurrency: 8, timeoutMs: 600_000, pollIntervalMs: 25, pollMaxIntervalMs: 30_000 });
    expect(s.workdir).toBe(join('.govops', 'work'));
    expect(s.hookSecret).toBeUndefined();
  });

  it('webhook delivery health is off by default; --auto-retry-failed needs it; its bounds come from the flags', () => {
    expect(settingsFrom({ ...defaults, dir: 'm' }, {}).webhookHealth).toBeUndefined();
    expect(settingsFrom({ ...defaults, dir: 'm', webhookHealthInterval: '30s' }, {}).webhookHealth).toEqual({ intervalMs: 30_000, overlapMs: 60_000 });
    expect(() => settingsFrom({ ...defaults, dir: 'm', autoRetryFailed: true }, {})).toThrow(/needs --webhook-health-interval/);
    const s = settingsFrom(
      { ...defaults, dir: 'm', webhookHealthInterval: '1m', webhookHealthOverlap: '2m', autoRetryFailed: true, autoRetryMax: '5', autoRetryBackoff: '30s', autoRetryRate: '20' },
      {},
    );
    expect(s.webhookHealth).toEqual({
      intervalMs: 60_000,
      overlapMs: 120_000,
      autoRetry: { maxAttempts: 5, backoffMs: 30_000, maxBackoffMs: 3_600_000, perMinute: 20 },
    });
    expect(() => settingsFrom({ ...defaults, dir: 'm', webhookHealthInterval: '1m', autoRetryFailed: true, autoRetryMax: '0' }, {})).toThrow(/--auto-retry-max/);
    expect(() => settingsFrom({ ...defaults, dir: 'm', webhookHealthInterval: 'often' }, {})).toThrow(/--webhook-health-interval/);
  });

  it('takes HOST:PORT and :PORT, and rejects anything else with a clear message', () => {
    expect(settingsFrom({ ...defaults, dir: 'm', listen: '127.0.0.1:9090' }, {}).listen).toEqual({ host: '127.0.0.1', port: 9090 });
    expect(settingsFrom({ ...defaults, dir: 'm', listen: ':0' }, {}).listen).toEqual({ host: '0.0.0.0', port: 0, anyHost: true });
    expect(settingsFrom({ ...defaults, dir: 'm', listen: '0.0.0.0:0' }, {}).listen).toEqual({ host: '0.0.0.0', port: 0 });
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
    // an empty file (a Secret key not filled in) is refused, as an empty --status-token-file is: taken as "no secret",
    // every push was answered 401 without a word at start-up
    const empty = join(dir, 'empty');
    await writeFile(empty, ' \n');
    expect(() => settingsFrom({ ...defaults, dir: 'm', gitWebhookSecretFile: empty }, {})).toThrow(/--git-webhook-secret-file .* is empty/);
  });
});

describe('govops run status token', () => {
  it('a status token with whitespace inside is refused at start (a bearer token is one word: it could never match)', async () => {
    expect(() => settingsFrom({ ...defaults, dir: 'm' }, { GOVOPS_STATUS_TOKEN: 'tok 1234' })).toThrow(/GOVOPS_STATUS_TOKEN holds whitespace/);
    const home = await cleanup.tmp('govops-token-');
    const file = join(home, 'token');
    await writeFile(file, 'first-line\nsecond-line\n');
    expect(() => settingsFrom({ ...defaults, dir: 'm', statusTokenFile: file }, {})).toThrow(/--status-token-file .* holds whitespace/);
  });
});
