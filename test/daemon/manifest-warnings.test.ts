/**
 * The daemon tells the manifests' warnings of a revision it accepts, as `govops validate` and `plan` do: README says
 * a secret shorter than 4 characters cannot be redacted and "resolving it is a warning at its reference". The daemon
 * logged warnings only with a rejected revision: an accepted one with a secret it cannot redact (or an unknown config
 * field it sends and never compares) went by without a word. Each is logged once per revision, at its
 * `file:line:col`, not on every resync.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { startRunning } from '../../src/daemon/run.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { Cleanup, until, runSettings, jsonLogSink } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const hook = (url: string): string => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: pager
spec:
  url: ${url}
  global: true
  notificationType: [healthCheckFailed]
  actionType: triggered
  secret: { fromEnv: GOVOPS_SECRET_HOOK }
`;

const reconciles = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^govops_reconcile_total\{result="[^"]+"\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
};

async function start(dir: string, env: Record<string, string>) {
  const sandbox = await startSandbox({ port: 0, transitionMs: 20 });
  cleanup.add(() => sandbox.close());
  const home = await cleanup.tmp('govops-home-');
  const { logs, sink } = jsonLogSink();
  const running = await startRunning(
    runSettings(home, { dir, resyncMs: 100, env: { ...process.env, ...env } }),
    pino({ level: 'info' }, sink),
    (onRequest) => new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }),
  );
  cleanup.add(() => running.shutdown(2000));
  return { logs, url: running.daemon.url };
}

describe('daemon: the warnings of an accepted revision', () => {
  it('are logged once per revision at their file:line:col (a secret too short to be redacted)', async () => {
    const dir = await cleanup.tmp('govops-warn-');
    await writeFile(join(dir, 'hook.yaml'), hook('https://hooks.example.com/a'));
    const { logs, url } = await start(dir, { GOVOPS_SECRET_HOOK: 'abc' });

    const short = (): Array<Record<string, unknown>> => logs.filter((l) => String(l.msg).includes('shorter than 4 characters'));
    // the revision applied, then resyncs of it: the warning is said once
    await until(async () => ((await reconciles(url)) >= 4 ? true : undefined), 20_000, 'a few resyncs');
    expect(short()).toHaveLength(1);
    expect(short()[0]).toMatchObject({ level: 40, file: join(dir, 'hook.yaml'), line: 10 });
    expect(String(short()[0]!.msg)).toMatch(new RegExp(`^${join(dir, 'hook.yaml')}:10:\\d+: Webhook/pager: spec\\.secret: the secret \\(fromEnv: GOVOPS_SECRET_HOOK\\) is shorter than 4 characters`));

    // a new revision with the same reference: said again, once
    await writeFile(join(dir, 'hook.yaml'), hook('https://hooks.example.com/b'));
    await until(() => (short().length === 2 ? true : undefined), 20_000, 'the warning of the new revision');
    const n = await reconciles(url);
    await until(async () => ((await reconciles(url)) >= n + 3 ? true : undefined), 20_000, 'resyncs of the new revision');
    expect(short()).toHaveLength(2);
  });

  it("and the plan's: a managed resource whose manifest is gone, without --prune, is reported (once per revision)", async () => {
    const dir = await cleanup.tmp('govops-warn-');
    await writeFile(join(dir, 'hook.yaml'), hook('https://hooks.example.com/a'));
    await writeFile(join(dir, 'other.yaml'), hook('https://hooks.example.com/o').replace('name: pager', 'name: other'));
    const { logs, url } = await start(dir, { GOVOPS_SECRET_HOOK: 'a-long-enough-secret' });
    await until(() => (logs.some((l) => l.msg === 'applied' && l.resource === 'Webhook/other') ? true : undefined), 20_000, 'other created');

    await rm(join(dir, 'other.yaml'));
    const orphan = (): Array<Record<string, unknown>> => logs.filter((l) => l.code === 'orphan');
    await until(() => (orphan().length ? true : undefined), 20_000, 'the orphan reported');
    const n = await reconciles(url);
    await until(async () => ((await reconciles(url)) >= n + 3 ? true : undefined), 20_000, 'resyncs');
    expect(orphan()).toHaveLength(1);
    expect(orphan()[0]).toMatchObject({
      level: 40,
      resource: 'Webhook/other',
      msg: 'Webhook/other is managed by govops but has no manifest: run with --prune to delete it',
    });
  });
});
