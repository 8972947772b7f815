/** The notifier (--notify-url): which reconciles give an event, and which repeats are not sent again. */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceApi } from '../../src/api/client-types.js';
import { ErrorCode, failure } from '../../src/errors.js';
import type { Attempt } from '../../src/daemon/loop.js';
import { MAX_NOTIFY_RETRY_AFTER_MS, Notifier, notifyUrlLabel } from '../../src/daemon/notify.js';
import { ManualClock } from '../helpers/clock.js';
import { awaitingOutcome } from '../../src/apply/outcome.js';
import type { PlanChange } from '../../src/plan/types.js';
import { startRunning } from '../../src/daemon/run.js';
import { closePgPools } from '../../src/state/pg/backend.js';
import { Cleanup, GOVOPS_SECRET_LAKE_TOKEN, lakehouse, runSettings, unreachableStateSettings, until } from './helpers.js';
import { ServiceClient } from '../../src/api/client.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { notifyTargetsFrom } from '../../src/cli/commands/run-action.js';
import { redactText } from '../../src/util/redact.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

/** An events receiver; `statuses` are its answers in turn (then 202). */
async function receiver(statuses: number[] = []): Promise<{ url: string; got: Array<{ type: string; subject: string }>; auth: Array<string | undefined> }> {
  const got: Array<{ type: string; subject: string }> = [];
  const auth: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      got.push(JSON.parse(text) as { type: string; subject: string });
      auth.push(req.headers.authorization);
      res.statusCode = statuses.shift() ?? 202;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, got, auth };
}

const at = new Date(0).toISOString();
const attempt = (verdict: Attempt['verdict'], extra: Partial<Attempt> = {}): Attempt => ({
  revision: 'rev1',
  reason: 'resync',
  apply: true,
  verdict,
  startedAt: at,
  finishedAt: at,
  durationSec: 0.1,
  ...extra,
});
const unreachable = (): Attempt =>
  attempt('unreachable', { failure: { code: 'GOVOPS_SERVICE_UNREACHABLE', failureClass: 'transient' } as Attempt['failure'] & object, error: 'connect ECONNREFUSED' });

describe('Notifier', () => {
  it('does not repeat a failure at every retry, but tells a new outage after a reconcile that succeeded', async () => {
    const recv = await receiver();
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), observe: false });
    n.notify(unreachable());
    n.notify(unreachable()); // the same failure at the retry: not news
    await n.idle();
    expect(recv.got.map((e) => e.type)).toEqual(['io.govops.reconcile.failed']);
    n.notify(attempt('in-sync')); // the service is back: nothing to tell, but the outage is over
    n.notify(unreachable()); // a new outage at a later resync
    await n.idle();
    expect(recv.got.map((e) => e.type)).toEqual(['io.govops.reconcile.failed', 'io.govops.reconcile.failed']);
  });
});

describe('Notifier: changes held back for a person', () => {
  it('are told once: the resync that finds them still held back (a plan, no apply) is the same news as the revision that held them', async () => {
    const recv = await receiver();
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), observe: false });
    const change = (name: string, action: string, blocked: { code: string; message: string }, manual?: true): PlanChange =>
      ({ resourceKind: 'Integration', name, action, adopt: false, changes: [], reasons: [], blocked, ...(manual ? { manualStep: { status: 'awaiting' } } : {}) }) as unknown as PlanChange;
    const lake = change('lake', 'create', { code: 'awaiting-manual-step', message: 'awaiting the create script (govops scripts lake --phase create)' }, true);
    const wh = change('wh', 'replace', { code: 'replace-not-allowed', message: 'config.host is not editable: a replace needs --allow-replace' });
    const plan = { changes: [lake, wh], summary: { create: 1, update: 0, replace: 1, delete: 0, adopt: 0, noop: 0 }, errors: [] };
    // the revision: applied, each change held back with its outcome (as src/apply gives them)
    const skipped = { resourceKind: 'Integration', name: 'wh', action: 'replace', result: 'skipped', durationMs: 0, error: `blocked: ${wh.blocked!.message}`, code: ErrorCode.blocked, failureClass: 'terminal' };
    n.notify(attempt('blocked', { reason: 'revision', result: { ok: true, changed: false, plan, outcomes: [awaitingOutcome(lake), skipped] } as unknown as Attempt['result'] }));
    // a resync without --self-heal: the same plan, nothing applied, so no outcome
    n.notify(attempt('blocked', { reason: 'resync', apply: false, result: { ok: true, changed: false, plan, outcomes: [] } as unknown as Attempt['result'] }));
    await n.idle();
    expect(recv.got.map((e) => e.type)).toEqual(['io.govops.reconcile.blocked']);
  });
});

describe('Notifier: an event not delivered', () => {
  it('is sent again at its next repeat, to the URL that did not get it only (a repeat is one of what was delivered)', async () => {
    const failing = await receiver([400]); // a final 4xx: not retried
    const working = await receiver();
    const n = new Notifier({ targets: [{ url: failing.url }, { url: working.url }], logger: pino({ level: 'silent' }), observe: false });
    n.notify(unreachable());
    await n.idle();
    expect(failing.got).toHaveLength(1); // answered 400: not delivered
    expect(working.got).toHaveLength(1);
    n.notify(unreachable()); // the same outage at the next retry
    await n.idle();
    expect(failing.got.map((e) => e.type)).toEqual(['io.govops.reconcile.failed', 'io.govops.reconcile.failed']);
    expect(working.got).toHaveLength(1); // delivered there: not repeated
    n.notify(unreachable()); // now delivered to both: no more repeats
    await n.idle();
    expect(failing.got).toHaveLength(2);
    expect(working.got).toHaveLength(1);
  });
});

describe('--notify-url shown by its origin', () => {
  it('a URL that is its origin alone is shown so in /status and the log, not as [redacted] (only a path or query may hold a token)', () => {
    const bare = 'https://origin-only.notify.example';
    const slash = 'https://slash-only.notify.example/';
    const withCreds = 'https://u:p%40ss-origin-cred@creds-only.notify.example';
    const chat = 'https://chat-token.notify.example/hooks/T0/B0/XXXXsecret';
    const targets = notifyTargetsFrom([bare, slash, withCreds, chat].map((url) => ({ url, headerFiles: [] })));
    new Notifier({ targets, logger: pino({ level: 'silent' }), observe: false });
    expect([bare, slash, withCreds, chat].map((u) => redactText(notifyUrlLabel(u)))).toEqual([
      'https://origin-only.notify.example/…',
      'https://slash-only.notify.example/…',
      'https://creds-only.notify.example/…',
      'https://chat-token.notify.example/…',
    ]);
    // nor is any other text naming that host (a webhook manifest's url in a plan)
    expect(redactText('url = "https://origin-only.notify.example/govops"')).toBe('url = "https://origin-only.notify.example/govops"');
    // what may be a secret is still never printed: a path's token, the credentials
    expect(redactText(chat)).not.toContain('XXXXsecret');
    expect(redactText(withCreds)).not.toContain('ss-origin-cred');
  });
});

describe('--notify-url with credentials in it', () => {
  it('sends them as Basic authentication (as curl does), never prints them, and refuses them beside an Authorization header file', async () => {
    const recv = await receiver();
    const withUser = recv.url.replace('http://', 'http://alerts:p%40ss-w0rd-notify@');
    const [target] = notifyTargetsFrom([{ url: withUser, headerFiles: [] }]);
    expect(target!.url).toBe(recv.url);
    const lines: string[] = [];
    const n = new Notifier({ targets: [target!], logger: pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) }), observe: false });
    n.notify(unreachable());
    await n.idle();
    expect(recv.auth).toEqual([`Basic ${Buffer.from('alerts:p@ss-w0rd-notify').toString('base64')}`]);
    expect(redactText(withUser)).not.toContain('w0rd');
    expect(lines.join('')).not.toContain('w0rd');
    const dir = await mkdtemp(join(tmpdir(), 'govops-notify-auth-'));
    try {
      await writeFile(join(dir, 'token'), 'Bearer t0ken-from-file\n');
      expect(() => notifyTargetsFrom([{ url: withUser, headerFiles: [`Authorization=${join(dir, 'token')}`] }])).toThrow(/credentials in the URL and an Authorization/);
      expect(() => notifyTargetsFrom([{ url: recv.url.replace('http://', 'http://a:%zz@'), headerFiles: [] }])).toThrow(/not valid percent-encoding/);
      // the headers govops sets itself are not taken from a file (two User-Agent headers went out)
      for (const name of ['Content-Type', 'User-Agent', 'Host']) {
        expect(() => notifyTargetsFrom([{ url: recv.url, headerFiles: [`${name}=${join(dir, 'token')}`] }])).toThrow(new RegExp(`the ${name} header is set by govops`));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('govops run --notify-url with a PostgreSQL state (several replicas)', () => {
  it('a standby sends no notification: each event comes once, from the leader, not once per replica', async () => {
    const recv = await receiver();
    const home = await mkdtemp(join(tmpdir(), 'govops-notify-standby-'));
    let reconciles = 0;
    // A state nothing answers at: this replica never gets the lease, it stands by.
    const running = await startRunning(
      await unreachableStateSettings(home, { notify: [{ url: recv.url }] }),
      pino({ level: 'silent' }),
      () => ({ close: async () => undefined }) as unknown as ServiceApi,
      async () => {
        reconciles++;
        const at = new Date().toISOString();
        // The revision is rejected (the leader rejects it too, and tells).
        return { stage: 'load', ok: false, error: 'bad manifest', failure: failure(ErrorCode.invalidRevision), diagnostics: [], outcomes: [], changed: false, startedAt: at, finishedAt: at };
      },
    );
    try {
      const deadline = Date.now() + 10_000;
      while (reconciles === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(reconciles).toBeGreaterThan(0);
      expect(running.elector?.isLeading()).toBe(false);
      await running.shutdown(5_000);
      expect(recv.got).toEqual([]);
    } finally {
      await running.shutdown(0).catch(() => undefined);
      await closePgPools();
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe('Notifier: the daemon stopping', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  it('a reconcile cut short by SIGTERM (its waits abandoned, the state saved) is not told as a failure', async () => {
    const recv = await receiver();
    // transitions outlast the test: the apply waits on the create when the daemon stops
    const sandbox = await startSandbox({ port: 0, transitionMs: 60_000 });
    cleanup.add(() => sandbox.close());
    const dir = await cleanup.tmp('govops-notify-stop-');
    const home = await cleanup.tmp('govops-notify-stop-home-');
    await writeFile(join(dir, 'lake.yaml'), lakehouse('lake', '/sql/1'));
    const settings = runSettings(home, { dir, notify: [{ url: recv.url }], env: { ...process.env, GOVOPS_SECRET_TEST_LAKE_TOKEN: GOVOPS_SECRET_LAKE_TOKEN } });
    const running = await startRunning(settings, pino({ level: 'silent' }), (onRequest) => new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, onRequest, retries: 0 }));
    cleanup.add(() => running.shutdown(0));
    const api = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken });
    cleanup.add(() => api.close());
    await until(async () => (await api.listIntegrations()).length === 1, 15_000, 'the create sent');
    expect(await running.shutdown(5_000)).toBe(true);
    expect(running.daemon.loop.snapshot().lastAttempt).toMatchObject({ verdict: 'failed', failure: { code: ErrorCode.cancelled } });
    expect(recv.got).toEqual([]);
  });

  it('a render the stop cuts short is a cancellation (not GOVOPS_INTERNAL, "a bug"), not told as a failure', async () => {
    const recv = await receiver();
    const dir = await cleanup.tmp('govops-notify-render-');
    const home = await cleanup.tmp('govops-notify-render-home-');
    const started = join(home, 'render-started');
    await writeFile(join(dir, 'render.mjs'), `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(started)}, ''); setInterval(() => {}, 1000);\n`);
    const settings = runSettings(home, { dir, notify: [{ url: recv.url }], render: { argv: [process.execPath, 'render.mjs'], timeoutMs: 60_000 } });
    const running = await startRunning(settings, pino({ level: 'silent' }), () => ({ close: async () => undefined }) as unknown as ServiceApi);
    cleanup.add(() => running.shutdown(0));
    await until(() => existsSync(started), 15_000, 'the render running');
    expect(await running.shutdown(5_000)).toBe(true);
    expect(running.daemon.loop.snapshot().lastAttempt).toMatchObject({ verdict: 'failed', failure: { code: ErrorCode.cancelled } });
    expect(recv.got).toEqual([]);
  });
});

describe('--notify-header-file whose value no HTTP header can carry', () => {
  it('is refused at start (a usage error naming the header, not the value), not sent as a failure at every event', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'govops-notify-hdr-'));
    try {
      const bom = join(dir, 'bom-token');
      await writeFile(bom, '\ufeffBearer hdr-bom-s3cret\n'); // saved by an editor that writes a byte-order mark
      const nul = join(dir, 'nul-token');
      await writeFile(nul, 'Bearer hdr-nul\u0000s3cret\n');
      for (const file of [bom, nul]) {
        let err: unknown;
        try {
          notifyTargetsFrom([{ url: 'https://alerts.example.com/govops', headerFiles: [`Authorization=${file}`] }]);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).message).toContain('--notify-header-file Authorization');
        expect((err as Error).message).not.toContain('s3cret');
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Notifier: a rejected revision whose manifests hold huge names', () => {
  it('sends an event of bounded size (each problem and message cut), not megabytes per event and per queued event', async () => {
    const recv = await receiver();
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), observe: false });
    const huge = 'x'.repeat(900_000); // a 1 MiB manifest file holds a name this long; its schema error names it
    const diagnostics = Array.from({ length: 20 }, (_, i) => ({ file: `m${i}.yaml`, line: 4, column: 9, kind: 'Integration', name: `${huge}${i}`, severity: 'error' as const, message: 'metadata.name: must be at most 63 characters' }));
    n.notify(
      attempt('invalid', {
        reason: 'revision',
        failure: { code: ErrorCode.invalidRevision, failureClass: 'terminal' } as Attempt['failure'] & object,
        error: `m0.yaml:4:9: Integration/${huge}0: metadata.name: must be at most 63 characters (and 19 more)`,
        result: { ok: false, changed: false, outcomes: [], diagnostics } as unknown as Attempt['result'],
      }),
    );
    await n.idle();
    expect(recv.got).toHaveLength(1);
    const e = recv.got[0] as unknown as { type: string; data: { message: string; problems: string[] } };
    expect(e.type).toBe('io.govops.reconcile.rejected');
    expect(JSON.stringify(e).length).toBeLessThan(64 * 1024);
    expect(e.data.problems).toHaveLength(20);
    expect(e.data.problems[3]).toMatch(/^m3\.yaml:4:9: Integration\/x+/);
    expect(e.data.message).toMatch(/^revision rev1 rejected: m0\.yaml:4:9: Integration\/x+/);
  });
});

describe('Notifier: a replica that leads again', () => {
  it('tells a new outage after the one it told ended while it was a standby (in sync there is the end of it too)', async () => {
    const recv = await receiver();
    let leading = true;
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), observe: false, active: () => leading });
    n.notify(unreachable()); // leader: the outage is told
    await n.idle();
    leading = false; // a failover: the other replica leads
    n.notify(attempt('in-sync')); // the service is back (this replica, a standby, plans too)
    leading = true; // leads again
    n.notify(unreachable()); // a new outage: news, whoever told the last one
    await n.idle();
    expect(recv.got.map((e) => e.type)).toEqual(['io.govops.reconcile.failed', 'io.govops.reconcile.failed']);
  });
});

describe('--notify-header-file: headers no notification can carry', () => {
  it('Expect, Upgrade and Keep-Alive are refused at start (undici refused them at every POST: each event retried and never delivered)', async () => {
    const recv = await receiver();
    const dir = await mkdtemp(join(tmpdir(), 'govops-notify-hop-'));
    try {
      await writeFile(join(dir, 'value'), '100-continue\n');
      for (const name of ['Expect', 'upgrade', 'Keep-Alive']) {
        expect(() => notifyTargetsFrom([{ url: recv.url, headerFiles: [`${name}=${join(dir, 'value')}`] }])).toThrow(new RegExp(`the ${name} header cannot be sent with a notification`));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Notifier: events still queued when the daemon stops', () => {
  it('are counted and logged as dropped (govops stopped), not as failed (the receiver refused them after every retry)', async () => {
    // a receiver that takes the first POST and answers nothing: the events after it wait in the queue
    const held: Array<() => void> = [];
    const server = createServer((req, res) => {
      req.resume();
      held.push(() => res.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
    const lines: Array<{ msg: string; level: number }> = [];
    const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as { msg: string; level: number }) });
    const registry = new Registry();
    const n = new Notifier({ targets: [{ url }], logger, registry, observe: false });
    n.notify(unreachable());
    n.notify(attempt('invalid', { error: 'bad manifest', failure: failure(ErrorCode.invalidRevision) }));
    n.notify(attempt('blocked', { failure: failure(ErrorCode.blocked) }));
    await until(() => held.length === 1, 10_000, 'the first POST received');
    await n.stop(0);
    for (const release of held) release();
    const counts = Object.fromEntries((await registry.getSingleMetric('govops_notifications_total')!.get()).values.map((v) => [v.labels.result, v.value]));
    expect(counts).toEqual({ delivered: 0, failed: 0, dropped: 3 });
    expect(lines.filter((l) => l.msg === 'notification not delivered')).toEqual([]);
    const dropped = lines.filter((l) => /^notification dropped: govops is stopping/.test(l.msg));
    expect(dropped).toHaveLength(3);
    // events lost: a warning, as when the full queue drops one
    expect(dropped.every((l) => l.level === 40)).toBe(true);
  });
});

describe("Notifier: a receiver's Retry-After", () => {
  /** A receiver answering its first POST with `status` and `retryAfter` (a function of the clock: an HTTP date), then 202. */
  async function slowingReceiver(status: number, retryAfter: () => string): Promise<{ url: string; posts: () => number }> {
    let posts = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        posts++;
        if (posts === 1) res.writeHead(status, { 'retry-after': retryAfter() });
        else res.writeHead(202);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, posts: () => posts };
  }

  async function firstWait(status: number, retryAfter: (clock: ManualClock) => string, opts: { maxRetryAfterMs?: number } = {}): Promise<number[]> {
    const clock = new ManualClock();
    const recv = await slowingReceiver(status, () => retryAfter(clock));
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), observe: false, clock, backoffMs: 1000, ...opts });
    n.notify(unreachable());
    await clock.untilTimer();
    const due = clock.dueIn();
    clock.advance(due[0]!);
    await n.idle();
    expect(recv.posts()).toBe(2);
    return due;
  }

  it('waits as long as it says, in seconds or as an HTTP date (the old code waited its own 1 s backoff)', async () => {
    expect(await firstWait(429, () => '7')).toEqual([7000]);
    expect(await firstWait(503, (c) => new Date(c.now() + 20_000).toUTCString())).toEqual([20_000]);
  });

  it('at most maxRetryAfterMs (a receiver asking for an hour does not hold the queue that long); none given: the backoff', async () => {
    expect(await firstWait(429, () => '3600', { maxRetryAfterMs: 60_000 })).toEqual([60_000]);
    expect(await firstWait(429, () => '3600')).toEqual([MAX_NOTIFY_RETRY_AFTER_MS]);
    expect(await firstWait(503, () => 'soon')).toEqual([1000]);
  });

  it('the stop ends its wait: the event is dropped, not held until the receiver said', async () => {
    const clock = new ManualClock();
    const recv = await slowingReceiver(503, () => '60');
    const registry = new Registry();
    const n = new Notifier({ targets: [{ url: recv.url }], logger: pino({ level: 'silent' }), registry, observe: false, clock });
    n.notify(unreachable());
    await clock.untilTimer();
    expect(clock.dueIn()).toEqual([60_000]);
    const stopping = n.stop(0);
    clock.advance(0);
    await stopping;
    const counts = Object.fromEntries((await registry.getSingleMetric('govops_notifications_total')!.get()).values.map((v) => [v.labels.result, v.value]));
    expect(counts).toEqual({ delivered: 0, failed: 0, dropped: 1 });
    expect(recv.posts()).toBe(1);
  });
});

describe('govops run --notify-url --identity', () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  it("each event carries the replica's identity (extension govopsidentity): two replicas on one host are told apart", async () => {
    const recv = await receiver();
    const dir = await cleanup.tmp('govops-notify-identity-');
    const home = await cleanup.tmp('govops-notify-identity-home-');
    const running = await startRunning(
      runSettings(home, { dir, identity: 'replica-b', notify: [{ url: recv.url }] }),
      pino({ level: 'silent' }),
      () => ({ close: async () => undefined }) as unknown as ServiceApi,
      async () => {
        const at = new Date().toISOString();
        return { stage: 'load', ok: false, error: 'bad manifest', failure: failure(ErrorCode.invalidRevision), diagnostics: [], outcomes: [], changed: false, startedAt: at, finishedAt: at };
      },
    );
    cleanup.add(() => running.shutdown(0));
    await until(() => recv.got.length > 0, 15_000, 'the rejected revision told');
    const event = recv.got[0] as unknown as Record<string, unknown>;
    expect(event).toMatchObject({ type: 'io.govops.reconcile.rejected', govopsidentity: 'replica-b' });
    // the source stays the producing context (receivers filter on it); the identity is beside it
    expect(event['source']).toMatch(/^govops:\/\//);
  });
});
