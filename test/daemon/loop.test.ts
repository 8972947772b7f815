import { afterEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReconcileLoop, type Attempt, type ReconcileRequest } from '../../src/daemon/loop.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { nextRevisionOrder, type Revision } from '../../src/sources/types.js';
import { leaderReconcileFn } from '../../src/daemon/standby.js';
import { silentLogger } from '../../src/log.js';
import { ErrorCode, type FailureInfo } from '../../src/errors.js';
import { ManualClock } from '../helpers/clock.js';
import type { PlanChange } from '../../src/plan/types.js';

/**
 * A real (small) reconcile function: reads `value.txt` from the revision folder. `invalid` → a load
 * failure with file:line; `failNext` → apply failures (a settle timeout by default: transient, or a 422:
 * terminal); `down` → service unreachable. Failures carry their code and class, as the engine's do.
 * Live state is a variable the test can change out of band (drift); `service.down` makes every reconcile
 * find the service unreachable, whatever the revision.
 */
function world() {
  const live = { value: '' };
  /** `conflict`: a value whose plan finds a conflict with what the service holds (a plan error: the revision is rejected). */
  const service = { down: false, conflict: '' };
  const calls: Array<{ id: string; apply: boolean; reason: string; aborted: () => boolean; forced: () => boolean }> = [];
  let gate: Promise<void> | undefined;
  let failuresLeft = 0;
  let failure: FailureInfo = { code: ErrorCode.settleTimeout, failureClass: 'transient' };
  const reconcile = async (req: ReconcileRequest): Promise<ReconcileResult> => {
    const call = { id: req.revision.id, apply: req.apply, reason: req.reason, aborted: () => req.signal.aborted, forced: () => req.forceSignal.aborted };
    calls.push(call);
    if (gate) await gate;
    const wanted = (await readFile(join(req.revision.root, 'value.txt'), 'utf8')).trim();
    const base = { revision: req.revision.id, outcomes: [], startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
    if (wanted.startsWith('secret:') && !existsSync(wanted.slice('secret:'.length))) {
      return {
        ...base, stage: 'load', ok: false, changed: false, error: 'value.txt:1:1: cannot read secret file',
        diagnostics: [{ file: 'value.txt', line: 1, column: 1, severity: 'error', message: 'cannot read secret file', rule: 'secret-file-unreadable' }],
        failure: { code: ErrorCode.invalidRevision, failureClass: 'terminal' },
      };
    }
    if (wanted === 'invalid') {
      return {
        ...base, stage: 'load', ok: false, changed: false, error: 'value.txt:1:1: invalid',
        diagnostics: [{ file: 'value.txt', line: 1, column: 1, severity: 'error', message: 'invalid' }],
        failure: { code: ErrorCode.invalidRevision, failureClass: 'terminal' },
      };
    }
    if (wanted === 'down' || service.down) {
      return {
        ...base, stage: 'plan', ok: false, changed: false, diagnostics: [], error: 'the service said something',
        failure: { code: ErrorCode.connectFailed, failureClass: 'transient' },
      };
    }
    if (service.conflict === wanted) {
      const errors = [`Integration/x: a ${wanted} already exists in the service and is not managed by govops`];
      const plan = { formatVersion: 2 as const, changes: [], summary: { create: 0, update: 0, replace: 0, delete: 0, adopt: 0, noop: 0 }, errors, warnings: [] };
      return { ...base, stage: 'plan', ok: false, changed: false, diagnostics: [], plan, error: errors[0], failure: { code: ErrorCode.planError, failureClass: 'terminal' } };
    }
    const changed = live.value !== wanted;
    // the one resource, when live differs: its field, live value against the revision's
    const change = { resourceKind: 'Integration', name: 'x', action: 'update', liveId: 'i-1', reasons: [], changes: [{ path: 'config.value', before: live.value, after: wanted }] };
    const plan = { formatVersion: 2 as const, changes: (changed ? [change] : []) as unknown as PlanChange[], summary: { create: 0, update: changed ? 1 : 0, replace: 0, delete: 0, adopt: 0, noop: 0 }, errors: [], warnings: [] };
    if (!req.apply) return { ...base, stage: 'done', ok: true, changed, diagnostics: [], plan };
    if (failuresLeft > 0 && changed) {
      failuresLeft--;
      return {
        ...base, stage: 'apply', ok: false, changed, diagnostics: [], plan, error: 'Integration/x: failed', failure,
        outcomes: [{ resourceKind: 'Integration', name: 'x', action: 'update', result: 'failed', durationMs: 1, error: 'failed', ...failure }],
      };
    }
    live.value = wanted;
    return { ...base, stage: 'done', ok: true, changed, diagnostics: [], plan };
  };
  return {
    live,
    service,
    calls,
    reconcile,
    hold() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    failNext(n: number, with_: FailureInfo = { code: ErrorCode.settleTimeout, failureClass: 'transient' }) {
      failuresLeft = n;
      failure = with_;
    },
  };
}

let dirs: string[] = [];
let loops: ReconcileLoop[] = [];
afterEach(async () => {
  for (const l of loops) await l.stop(1000);
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  dirs = [];
  loops = [];
});

async function rev(id: string, value: string): Promise<Revision> {
  const root = await mkdtemp(join(tmpdir(), 'govops-loop-'));
  dirs.push(root);
  await writeFile(join(root, 'value.txt'), value);
  return { id, root, paths: ['.'], display: '', observedAt: new Date().toISOString(), order: nextRevisionOrder() };
}

/** `r` published again by its source (its folder written again, or the content back to it): seen now. */
function again(r: Revision): Revision {
  return { ...r, observedAt: new Date(Date.parse(r.observedAt) + 1000).toISOString(), order: nextRevisionOrder() };
}

function makeLoop(w: ReturnType<typeof world>, opts: Partial<{ resyncMs: number; selfHeal: boolean; clock: ManualClock; retryMaxMs: number; recheck: (r: Revision) => Promise<boolean> }> = {}) {
  // (resync far away unless a test sets it: a terminal failure is retried only at the resync period)
  const attempts: Attempt[] = [];
  const loop = new ReconcileLoop({
    reconcile: w.reconcile,
    logger: silentLogger(),
    resyncMs: opts.resyncMs ?? 60_000,
    selfHeal: opts.selfHeal ?? false,
    retryBaseMs: 20,
    retryMaxMs: opts.retryMaxMs ?? 100,
    onAttempt: (a) => void attempts.push(a),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.recheck ? { recheck: opts.recheck } : {}),
  });
  loops.push(loop);
  return { loop, attempts };
}

/**
 * r1 applied; then live state drifts and the service is down when the resync falls due (resync period 1000 ms):
 * the resync fails; the service comes back and its retry (20 ms later) runs.
 */
async function driftThenResyncOutage(w: ReturnType<typeof world>, clock: ManualClock, loop: ReconcileLoop, attempts: Attempt[]): Promise<void> {
  loop.submit(await rev('r1', 'a'));
  await loop.idle();
  w.live.value = 'tampered';
  w.service.down = true;
  clock.advance(1000);
  await loop.idle();
  expect(attempts.at(-1)).toMatchObject({ revision: 'r1', reason: 'resync', verdict: 'unreachable' });
  w.service.down = false;
  clock.advance(20);
  await loop.idle();
}

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ReconcileLoop', () => {
  it('runs one reconcile at a time and coalesces revisions that arrive meanwhile (newest wins)', async () => {
    const w = world();
    const { loop } = makeLoop(w);
    const release = w.hold();
    loop.submit(await rev('r1', 'a'));
    await until(() => w.calls.length === 1);
    loop.submit(await rev('r2', 'b'));
    loop.submit(await rev('r3', 'c'));
    expect(loop.snapshot().pending).toBe('r3');
    expect(w.calls).toHaveLength(1);
    release();
    await until(() => w.calls.length === 2);
    await loop.idle();
    expect(w.calls.map((c) => c.id)).toEqual(['r1', 'r3']);
    expect(w.live.value).toBe('c');
    expect(loop.snapshot()).toMatchObject({ ready: true, lastApplied: { revision: 'r3' } });
  });

  it('a revision rejected for a secret file it could not read is applied at the first resync after the file appears', async () => {
    const w = world();
    const secretDir = await mkdtemp(join(tmpdir(), 'govops-loop-secret-'));
    dirs.push(secretDir);
    const secret = join(secretDir, 'db-password');
    const rechecked: string[] = [];
    // what the daemon gives the loop: whether the revision's secrets resolve now (engine.ts), here the file's presence
    const recheck = (r: Revision): Promise<boolean> => {
      rechecked.push(r.id);
      return readFile(join(r.root, 'value.txt'), 'utf8').then((v) => existsSync(v.trim().slice('secret:'.length)));
    };
    const { loop, attempts } = makeLoop(w, { recheck });
    loop.submit(await rev('good', 'a'));
    await loop.idle();
    loop.submit(await rev('needs-secret', `secret:${secret}`));
    await loop.idle();
    expect(loop.snapshot().rejected?.revision).toBe('needs-secret');
    // its folder is kept: it is looked at again
    expect(loop.inUse()).toEqual(expect.arrayContaining(['good', 'needs-secret']));
    // a resync while the file is still missing: looked at without an attempt (no log, event or count), then the drift check
    loop.resyncNow();
    await loop.idle();
    expect(rechecked).toEqual(['needs-secret']);
    expect(attempts.map((a) => `${a.revision}:${a.reason}:${a.verdict}`)).toEqual(['good:revision:applied', 'needs-secret:revision:invalid', 'good:resync:in-sync']);
    // the operator adds the file (a Kubernetes Secret's new key, mounted): the next resync applies the revision
    await writeFile(secret, 's3cr3t-value');
    loop.resyncNow();
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'needs-secret', reason: 'revision', apply: true, verdict: 'applied' });
    expect(w.live.value).toBe(`secret:${secret}`);
    expect(loop.snapshot()).toMatchObject({ lastGood: { id: 'needs-secret' }, lastApplied: { revision: 'needs-secret' } });
    expect(loop.snapshot().rejected).toBeUndefined();
    // applied: not looked at again
    loop.resyncNow();
    await loop.idle();
    expect(rechecked).toHaveLength(2);
    expect(attempts.at(-1)).toMatchObject({ revision: 'needs-secret', reason: 'resync' });
  });

  it('a revision rejected for another reason, or one a newer revision replaced, is not looked at again', async () => {
    const w = world();
    const rechecked: string[] = [];
    const { loop } = makeLoop(w, { recheck: (r) => (rechecked.push(r.id), Promise.resolve(true)) });
    loop.submit(await rev('good', 'a'));
    await loop.idle();
    loop.submit(await rev('bad', 'invalid'));
    await loop.idle();
    loop.resyncNow();
    await loop.idle();
    expect(rechecked).toEqual([]);
    loop.submit(await rev('needs-secret', 'secret:/nonexistent/govops-test/secret'));
    await loop.idle();
    loop.submit(await rev('newer', 'invalid'));
    await loop.idle();
    loop.resyncNow();
    await loop.idle();
    expect(rechecked).toEqual([]);
    expect(loop.inUse()).not.toContain('needs-secret');
  });

  it('rejects an invalid revision whole, keeps the last good one, and resyncs the last good one', async () => {
    const w = world();
    const { loop, attempts } = makeLoop(w);
    loop.submit(await rev('good', 'a'));
    await loop.idle();
    loop.submit(await rev('bad', 'invalid'));
    await loop.idle();
    const s = loop.snapshot();
    expect(s.lastGood?.id).toBe('good');
    expect(s.rejected?.revision).toBe('bad');
    expect(s.rejected?.result?.diagnostics[0]).toMatchObject({ file: 'value.txt', line: 1 });
    expect(s.ready).toBe(true);
    expect(loop.inUse()).toContain('good');
    w.live.value = 'tampered';
    loop.resyncNow();
    await loop.idle();
    const last = attempts.at(-1)!;
    expect(last).toMatchObject({ revision: 'good', reason: 'resync', apply: false, verdict: 'drift' });
    expect(loop.snapshot().drift).toBe(true);
    expect(w.live.value).toBe('tampered'); // reported, not repaired
  });

  it('with self-heal the periodic resync applies drift', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { selfHeal: true, resyncMs: 50, clock });
    loop.submit(await rev('g', 'a'));
    await loop.idle();
    w.live.value = 'tampered';
    clock.advance(50);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ reason: 'resync', verdict: 'applied' });
    expect(w.live.value).toBe('a');
    expect(loop.snapshot().drift).toBe(false);
  });

  it('retries a failed apply with exponential backoff until it succeeds (on the loop clock)', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock });
    w.failNext(2);
    loop.submit(await rev('r', 'x'));
    await loop.idle();
    expect(attempts.map((a) => `${a.reason}:${a.verdict}`)).toEqual(['revision:failed']);
    // first retry 20 ms after the failure, the second 40 ms after that: not a millisecond earlier
    expect(Date.parse(loop.snapshot().nextRetryAt!) - clock.now()).toBe(20);
    clock.advance(19);
    await loop.idle();
    expect(attempts).toHaveLength(1);
    clock.advance(1);
    await loop.idle();
    expect(attempts.map((a) => `${a.reason}:${a.verdict}`)).toEqual(['revision:failed', 'retry:failed']);
    expect(Date.parse(loop.snapshot().nextRetryAt!) - clock.now()).toBe(40);
    clock.advance(39);
    await loop.idle();
    expect(attempts).toHaveLength(2);
    clock.advance(1);
    await loop.idle();
    expect(attempts.map((a) => `${a.reason}:${a.verdict}`)).toEqual(['revision:failed', 'retry:failed', 'retry:applied']);
    expect(loop.snapshot().consecutiveFailures).toBe(0);
    expect(loop.snapshot().waiting).toBeUndefined();
  });

  it('a terminal failure (422) is not retried with backoff: only at the resync period; readiness unchanged', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { resyncMs: 400, clock });
    loop.submit(await rev('ok', 'a'));
    await loop.idle();
    w.failNext(1, { code: ErrorCode.apiValidation, failureClass: 'terminal' });
    loop.submit(await rev('r', 'x'));
    await loop.idle();
    expect(attempts[1]).toMatchObject({ verdict: 'failed', retry: 'slow', failure: { code: 'GOVOPS_API_VALIDATION' } });
    expect(loop.snapshot().ready).toBe(true);
    expect(Date.parse(loop.snapshot().nextRetryAt!) - Date.parse(attempts[1]!.finishedAt)).toBe(400);
    clock.advance(399);
    await loop.idle();
    expect(attempts).toHaveLength(2);
    clock.advance(1);
    await loop.idle();
    expect(attempts[2]).toMatchObject({ reason: 'retry', revision: 'r', verdict: 'applied' });
    expect(w.live.value).toBe('x');
  });

  it('is not ready while the service is unreachable, and retries', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock });
    loop.submit(await rev('d', 'down'));
    await loop.idle();
    clock.advance(20);
    await loop.idle();
    expect(attempts).toHaveLength(2);
    expect(attempts.every((a) => a.verdict === 'unreachable')).toBe(true);
    expect(loop.snapshot().ready).toBe(false);
    expect(loop.snapshot().lastGood).toBeUndefined();
    loop.submit(await rev('u', 'up'));
    await until(() => loop.snapshot().ready);
  });

  it('a revision arriving while the service is down is retried until applied; a due resync never plans the older one', async () => {
    const w = world();
    const clock = new ManualClock();
    // resyncs come more often than the retries once the backoff has grown (the drill that stalled)
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 50, retryMaxMs: 1000, selfHeal: true });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    w.service.down = true;
    const r2 = await rev('r2', 'b');
    loop.submit(r2);
    await loop.idle();
    for (let i = 0; i < 30; i++) {
      clock.advance(50);
      await loop.idle();
    }
    const afterR2 = attempts.slice(1);
    expect(afterR2.length).toBeGreaterThan(5);
    // every attempt since r2 arrived was at r2: no resync of r1 took its place
    expect(afterR2.every((a) => a.revision === 'r2' && a.verdict === 'unreachable')).toBe(true);
    const waiting = loop.snapshot().waiting!;
    expect(waiting).toMatchObject({
      revision: 'r2',
      since: r2.observedAt,
      state: 'retrying',
      attempts: afterR2.length,
      lastError: { code: ErrorCode.connectFailed, failureClass: 'transient', message: 'the service said something', at: afterR2.at(-1)!.finishedAt },
    });
    expect(waiting.nextTryAt).toBe(loop.snapshot().nextRetryAt);
    expect(loop.snapshot()).toMatchObject({ lastApplied: { revision: 'r1' }, ready: false });

    // the service is back: r2 is applied without anything new from the source
    w.service.down = false;
    clock.advance(1000);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r2', verdict: 'applied' });
    expect(w.live.value).toBe('b');
    expect(loop.snapshot()).toMatchObject({ lastApplied: { revision: 'r2' }, ready: true, consecutiveFailures: 0 });
    expect(loop.snapshot().waiting).toBeUndefined();
    // and the resyncs go on with r2
    clock.advance(50);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r2', reason: 'resync', verdict: 'in-sync' });
  });

  it('a failed resync of the last good revision does not replace the newer revision waiting to be applied', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 10_000, retryMaxMs: 1000 });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    w.service.down = true;
    loop.submit(await rev('r2', 'b'));
    await loop.idle();
    // asked for a drift check while r2 waits: r2 is tried, not r1
    loop.resyncNow();
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r2', reason: 'retry' });
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r2', attempts: 2 });
    // a newer revision takes over; once it fails too, it is the one waiting
    loop.submit(await rev('r3', 'c'));
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r3', state: 'running', attempts: 0 });
    await loop.idle();
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r3', state: 'retrying', attempts: 1 });
    w.service.down = false;
    clock.advance(1000);
    await loop.idle();
    expect(w.live.value).toBe('c');
    expect(attempts.filter((a) => a.revision === 'r2' && a.verdict === 'applied')).toEqual([]);
    expect(loop.snapshot().waiting).toBeUndefined();
  });

  it('an invalid newer revision leaves the valid one waiting to be applied', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    w.service.down = true;
    loop.submit(await rev('r2', 'b'));
    await loop.idle();
    w.service.down = false;
    loop.submit(await rev('r3', 'invalid'));
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r3', verdict: 'invalid' });
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r2', state: 'retrying' });
    clock.advance(100);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r2', verdict: 'applied' });
    expect(w.live.value).toBe('b');
  });

  // A replica elected leader submits its last good revision again (run.ts onElected; standby.ts when elected while
  // planning): that revision was seen before the one waiting, which must still be applied.
  it('an older revision submitted again never clears the newer one being retried: the newer one is applied', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, retryMaxMs: 1000 });
    const r1 = { ...(await rev('r1', 'a')), observedAt: '2026-01-01T00:00:01.000Z' };
    loop.submit(r1);
    await loop.idle();
    w.service.down = true;
    loop.submit({ ...(await rev('r2', 'b')), observedAt: '2026-01-01T00:00:02.000Z' });
    await loop.idle();
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r2', state: 'retrying' });
    w.service.down = false;
    loop.submit(loop.snapshot().lastGood!); // r1 again
    await loop.idle();
    for (let i = 0; i < 10; i++) {
      clock.advance(1000);
      await loop.idle();
    }
    // the old code applied r1 as a new revision, which cleared r2's retry: r2 was never applied
    expect(w.live.value).toBe('b');
    expect(loop.snapshot()).toMatchObject({ lastApplied: { revision: 'r2' } });
    expect(loop.snapshot().waiting).toBeUndefined();
    expect(attempts.filter((a) => a.revision === 'r1')).toHaveLength(1);
  });

  // The time of day set back (NTP, a VM resumed) between two commits: the later one's observedAt is the earlier.
  it('a revision seen after the wall clock was set back is still the newer one: it replaces the revision being retried', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop } = makeLoop(w, { clock, retryMaxMs: 1000 });
    loop.submit({ ...(await rev('r1', 'a')), observedAt: '2026-01-01T00:00:10.000Z' });
    await loop.idle();
    w.service.down = true;
    loop.submit({ ...(await rev('r2', 'b')), observedAt: '2026-01-01T00:00:20.000Z' });
    await loop.idle();
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r2', state: 'retrying' });
    w.service.down = false;
    loop.submit({ ...(await rev('r3', 'c')), observedAt: '2026-01-01T00:00:05.000Z' }); // the next commit, seen after a step back
    await loop.idle();
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await loop.idle();
    }
    // the old code took r3 for older than r2 (by its time of day) and dropped it: r2 stayed in force until the next commit
    expect(w.live.value).toBe('c');
    expect(loop.snapshot()).toMatchObject({ lastApplied: { revision: 'r3' } });
  });

  it('an older revision submitted again while a newer one is queued does not take its place', async () => {
    const w = world();
    const { loop } = makeLoop(w);
    const release = w.hold();
    const r1 = { ...(await rev('r1', 'a')), observedAt: '2026-01-01T00:00:01.000Z' };
    loop.submit(r1);
    loop.submit({ ...(await rev('r2', 'b')), observedAt: '2026-01-01T00:00:02.000Z' }); // queued while r1 runs
    loop.submit({ ...r1 }); // r1 again (elected while planning it)
    expect(loop.snapshot().pending).toBe('r2');
    release();
    await loop.idle();
    expect(w.live.value).toBe('b'); // the old code: r2 dropped, r1 applied twice
  });

  it('a revision rejected when it is retried (after an outage) is not tried again at each resync: the last good one is resynced', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 1000, retryMaxMs: 100 });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    w.service.down = true;
    loop.submit(await rev('r2', 'b'));
    await loop.idle();
    expect(loop.snapshot().waiting).toMatchObject({ revision: 'r2', state: 'retrying' });
    // the service is back, and the plan of r2 finds a conflict: r2 is rejected whole
    w.service.down = false;
    w.service.conflict = 'b';
    clock.advance(20);
    await loop.idle();
    expect(attempts.find((a) => a.revision === 'r2' && a.reason === 'retry')).toMatchObject({ verdict: 'invalid' });
    expect(loop.snapshot()).toMatchObject({ lastGood: { id: 'r1' }, rejected: { revision: 'r2' } });
    expect(loop.snapshot().waiting).toBeUndefined();
    expect(loop.snapshot().nextRetryAt).toBeUndefined();
    // the resyncs check r1 (the revision in force) for drift; the rejected r2 is not tried again
    w.live.value = 'tampered';
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await loop.idle();
    }
    const later = attempts.slice(attempts.findIndex((a) => a.verdict === 'invalid') + 1);
    expect(later.map((a) => `${a.revision}:${a.reason}:${a.verdict}`)).toEqual(['r1:resync:in-sync', 'r1:resync:drift', 'r1:resync:drift', 'r1:resync:drift']);
    expect(loop.snapshot()).toMatchObject({ drift: true, ready: true });
    expect(loop.inUse()).not.toContain('r2');
  });

  it('once the revision retried after an outage is rejected, the last good one is checked at once (ready again)', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 60_000, retryMaxMs: 100 });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    w.service.down = true;
    loop.submit(await rev('r2', 'b'));
    await loop.idle();
    expect(loop.snapshot().ready).toBe(false);
    w.service.down = false;
    w.service.conflict = 'b';
    clock.advance(20);
    await loop.idle();
    // no clock time passed since the rejection: r1 was planned right after it
    expect(attempts.slice(-2).map((a) => `${a.revision}:${a.reason}:${a.verdict}`)).toEqual(['r2:retry:invalid', 'r1:resync:in-sync']);
    expect(loop.snapshot()).toMatchObject({ ready: true, consecutiveFailures: 0, lastGood: { id: 'r1' }, rejected: { revision: 'r2' } });
  });

  it('GOVOPS_ALREADY_EXISTS (the world changed under the plan: the next plan adopts or blocks) plans again after a backoff, not at the resync period; never in a tight loop', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { resyncMs: 60_000, clock, retryMaxMs: 100 });
    loop.submit(await rev('ok', 'a'));
    await loop.idle();
    // (it stays so for three attempts: a list that lags keeps the create planned; the delays grow)
    w.failNext(3, { code: ErrorCode.alreadyExists, failureClass: 'terminal' });
    loop.submit(await rev('r', 'x'));
    await loop.idle();
    expect(attempts[1]).toMatchObject({ verdict: 'failed', retry: 'backoff', failure: { code: 'GOVOPS_ALREADY_EXISTS' } });
    expect(loop.snapshot().ready).toBe(true);
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const delay = Date.parse(loop.snapshot().nextRetryAt!) - clock.now();
      delays.push(delay);
      clock.advance(delay - 1);
      await loop.idle();
      expect(attempts).toHaveLength(2 + i);
      clock.advance(1);
      await loop.idle();
      expect(attempts).toHaveLength(3 + i);
    }
    expect(delays).toEqual([20, 40, 80]);
    expect(attempts.slice(2).map((a) => `${a.reason}:${a.verdict}`)).toEqual(['retry:failed', 'retry:failed', 'retry:applied']);
    expect(w.live.value).toBe('x');
  });

  it('a terminal failure is tried again once per resync period, not twice in a row', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { resyncMs: 400, clock });
    loop.submit(await rev('ok', 'a'));
    await loop.idle();
    w.failNext(1000, { code: ErrorCode.apiValidation, failureClass: 'terminal' });
    loop.submit(await rev('r', 'x'));
    await loop.idle();
    expect(attempts).toHaveLength(2);
    for (let i = 1; i <= 3; i++) {
      clock.advance(400);
      await loop.idle();
      expect(attempts).toHaveLength(2 + i);
    }
    expect(attempts.slice(2).every((a) => a.reason === 'retry' && a.verdict === 'failed')).toBe(true);
    expect(loop.snapshot().consecutiveFailures).toBe(4);
  });

  it('drift found by the retry of a failed resync is reported as drift (self-heal off)', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 1000, retryMaxMs: 100 });
    await driftThenResyncOutage(w, clock, loop, attempts);
    expect(attempts.at(-1)).toMatchObject({ revision: 'r1', reason: 'retry', apply: false, verdict: 'drift' });
    expect(w.live.value).toBe('tampered');
    expect(loop.snapshot()).toMatchObject({ drift: true, lastDrift: { revision: 'r1', repaired: false } });
  });

  it('drift repaired by the retry of a failed resync is recorded (self-heal on)', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 1000, retryMaxMs: 100, selfHeal: true });
    await driftThenResyncOutage(w, clock, loop, attempts);
    expect(attempts.at(-1)).toMatchObject({ revision: 'r1', reason: 'retry', apply: true, verdict: 'applied' });
    expect(w.live.value).toBe('a');
    expect(loop.snapshot()).toMatchObject({ drift: false, lastDrift: { revision: 'r1', repaired: true } });
  });

  // Re-elected while the newer revision still runs (the lease lost and won back while its apply waited on the state):
  // the last good revision submitted then was queued, and ran after the newer one failed.
  it('an older revision submitted again while a newer one runs is not applied after it: the newer one is retried', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, retryMaxMs: 1000 });
    loop.submit({ ...(await rev('r1', 'a')), observedAt: '2026-01-01T00:00:01.000Z' });
    await loop.idle();
    w.failNext(1);
    const release = w.hold();
    loop.submit({ ...(await rev('r2', 'b')), observedAt: '2026-01-01T00:00:02.000Z' });
    await until(() => w.calls.length === 2);
    loop.submit(loop.snapshot().lastGood!); // r1 again, while r2 runs
    release();
    await loop.idle();
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await loop.idle();
    }
    expect(attempts.map((a) => `${a.revision}:${a.reason}:${a.verdict}`)).toEqual(['r1:revision:applied', 'r2:revision:failed', 'r2:retry:applied']);
    expect(w.live.value).toBe('b');
    expect(loop.snapshot()).toMatchObject({ lastApplied: { revision: 'r2' } });
  });

  it('an older revision submitted again while a newer one runs is dropped once the newer one is applied', async () => {
    const w = world();
    const { loop, attempts } = makeLoop(w);
    loop.submit({ ...(await rev('r1', 'a')), observedAt: '2026-01-01T00:00:01.000Z' });
    await loop.idle();
    const release = w.hold();
    loop.submit({ ...(await rev('r2', 'b')), observedAt: '2026-01-01T00:00:02.000Z' });
    await until(() => w.calls.length === 2);
    loop.submit(loop.snapshot().lastGood!);
    release();
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.verdict}`)).toEqual(['r1:applied', 'r2:applied']);
    expect(w.live.value).toBe('b');
  });

  it('an older revision submitted again while a newer one runs is applied when the newer one is rejected', async () => {
    const w = world();
    const { loop, attempts } = makeLoop(w);
    loop.submit({ ...(await rev('r1', 'a')), observedAt: '2026-01-01T00:00:01.000Z' });
    await loop.idle();
    w.live.value = 'left by the old leader';
    const release = w.hold();
    loop.submit({ ...(await rev('r2', 'invalid')), observedAt: '2026-01-01T00:00:02.000Z' });
    await until(() => w.calls.length === 2);
    loop.submit(loop.snapshot().lastGood!);
    release();
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.verdict}`)).toEqual(['r1:applied', 'r2:invalid', 'r1:applied']);
    expect(w.live.value).toBe('a');
  });

  it('drift a self-heal resync could not repair is reported as drift, not repaired', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 1000, selfHeal: true });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    w.live.value = 'tampered';
    w.failNext(1000, { code: ErrorCode.apiValidation, failureClass: 'terminal' });
    clock.advance(1000);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r1', reason: 'resync', apply: true, verdict: 'failed' });
    expect(w.live.value).toBe('tampered');
    expect(loop.snapshot()).toMatchObject({
      drift: true,
      lastDrift: { revision: 'r1', repaired: false, resources: [{ kind: 'Integration', name: 'x', fields: [{ path: 'config.value', live: 'tampered', desired: 'a' }] }] },
    });
    // the service takes it at the next try (at the resync period): repaired
    w.failNext(0);
    clock.advance(1000);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r1', reason: 'retry', verdict: 'applied' });
    expect(w.live.value).toBe('a');
    expect(loop.snapshot()).toMatchObject({ drift: false, lastDrift: { revision: 'r1', repaired: true } });
  });

  it('stop() aborts the in-flight reconcile, waits for it within the grace period, and takes no new work', async () => {
    const w = world();
    const { loop } = makeLoop(w);
    const release = w.hold();
    loop.submit(await rev('r1', 'a'));
    await until(() => w.calls.length === 1);
    const stopping = loop.stop(5000);
    expect(w.calls[0]!.aborted()).toBe(true);
    expect(w.calls[0]!.forced()).toBe(false);
    setTimeout(release, 30);
    expect(await stopping).toBe(true);
    loop.submit(await rev('r2', 'b'));
    await new Promise((r) => setTimeout(r, 30));
    expect(w.calls).toHaveLength(1);
  });

  it('stop() gives up after the grace period', async () => {
    const w = world();
    const { loop } = makeLoop(w);
    const release = w.hold();
    loop.submit(await rev('r1', 'a'));
    await until(() => w.calls.length === 1);
    expect(await loop.stop(50)).toBe(false);
    // near the end of the grace period the calls in flight were aborted (so the state could be saved)
    expect(w.calls[0]!.forced()).toBe(true);
    release();
  });
});

describe('ReconcileLoop: a resync falling due during an attempt', () => {
  it('is done by that attempt: no second look right after it (a revision applied, or a failure waiting out its backoff)', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, resyncMs: 1000 });
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    // r2 runs when the resync period is over: the resync timer fires during it
    const release = w.hold();
    loop.submit(await rev('r2', 'b'));
    await until(() => w.calls.length === 2);
    clock.advance(1000);
    release();
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.reason}`)).toEqual(['r1:revision', 'r2:revision']);
    // the next resync comes a period after r2
    clock.advance(999);
    await loop.idle();
    expect(attempts).toHaveLength(2);
    clock.advance(1);
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r2', reason: 'resync' });

    // r3 fails while the resync falls due: it is tried again after its backoff (20 ms), not at once
    const hold = w.hold();
    w.failNext(1);
    loop.submit(await rev('r3', 'c'));
    await until(() => w.calls.length === 4);
    clock.advance(1000);
    hold();
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.reason}:${a.verdict}`).slice(3)).toEqual(['r3:revision:failed']);
    clock.advance(20);
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.reason}:${a.verdict}`).slice(3)).toEqual(['r3:revision:failed', 'r3:retry:applied']);
  });
});

describe('ReconcileLoop: a revision published again', () => {
  it('the revision in force published again by the source is not a new revision: nothing runs (a resync comes as usual)', async () => {
    const w = world();
    const { loop, attempts } = makeLoop(w);
    const r1 = await rev('r1', 'a');
    loop.submit(r1);
    await loop.idle();
    w.live.value = 'changed by hand';
    // its folder was gone and is written again: the source publishes it again (a new object, seen later)
    loop.submit(again(r1));
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.reason}:${a.verdict}`)).toEqual(['r1:revision:applied']);
    expect(w.live.value).toBe('changed by hand'); // drift is not put back without --self-heal
    loop.resyncNow();
    await loop.idle();
    expect(attempts.at(-1)).toMatchObject({ revision: 'r1', reason: 'resync', apply: false, verdict: 'drift' });
  });

  it('the revision being retried published again is tried again at once, as the retry it is', async () => {
    const w = world();
    const clock = new ManualClock();
    const { loop, attempts } = makeLoop(w, { clock, retryMaxMs: 1000 });
    const r1 = await rev('r1', 'a');
    loop.submit(r1);
    await loop.idle();
    w.service.down = true;
    loop.resyncNow();
    await loop.idle();
    w.service.down = false;
    w.live.value = 'changed by hand';
    loop.submit(again(r1));
    await loop.idle();
    // no clock time passed: not the backoff's timer, the publication
    expect(attempts.map((a) => `${a.reason}:${a.apply}:${a.verdict}`)).toEqual(['revision:true:applied', 'resync:false:unreachable', 'retry:false:drift']);
    expect(w.live.value).toBe('changed by hand');
  });

  it('the revision in force published after a rejected one (the manifest fixed back) is news: looked at now, its attempt the last', async () => {
    const w = world();
    const { loop, attempts } = makeLoop(w);
    const r1 = await rev('r1', 'a');
    loop.submit(r1);
    await loop.idle();
    loop.submit(await rev('bad', 'invalid'));
    await loop.idle();
    expect(loop.snapshot().rejected?.revision).toBe('bad');
    // the edit undone: the content, and so the revision, is r1's again
    loop.submit(again(r1));
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.verdict}`)).toEqual(['r1:applied', 'bad:invalid', 'r1:in-sync']);
    expect(loop.snapshot().lastAttempt).toMatchObject({ revision: 'r1', verdict: 'in-sync' }); // /status: no error shown any more
  });

  it('published again while another revision waits or runs, it is news (a rollback to it): applied', async () => {
    const w = world();
    const { loop, attempts } = makeLoop(w);
    const r1 = await rev('r1', 'a');
    loop.submit(r1);
    await loop.idle();
    const release = w.hold();
    loop.submit(await rev('r2', 'b'));
    await until(() => w.calls.length === 2);
    loop.submit(again(r1));
    release();
    await loop.idle();
    expect(attempts.map((a) => `${a.revision}:${a.reason}:${a.verdict}`)).toEqual(['r1:revision:applied', 'r2:revision:applied', 'r1:revision:applied']);
    expect(w.live.value).toBe('a');
  });
});

describe('ReconcileLoop on a standby replica', () => {
  it('once elected, it applies the revision in force it only planned (submitAgain)', async () => {
    const w = world();
    let leading = false;
    const loop = new ReconcileLoop({
      reconcile: leaderReconcileFn(w.reconcile, { isLeading: () => leading, signal: new AbortController().signal }, () => undefined),
      logger: silentLogger(),
      resyncMs: 60_000,
      selfHeal: false,
    });
    loops.push(loop);
    loop.submit(await rev('r1', 'a'));
    await loop.idle();
    expect(w.live.value).toBe('');
    leading = true;
    loop.submitAgain(loop.snapshot().lastGood!); // run.ts onElected
    await loop.idle();
    expect(w.live.value).toBe('a');
    expect(loop.snapshot().lastApplied?.revision).toBe('r1');
  });

  it('a revision resubmitted by a newly elected leader waits since the election, not since it arrived days ago (a false > 900 alert)', async () => {
    const w = world();
    const clock = new ManualClock();
    let leading = false;
    const loop = new ReconcileLoop({
      reconcile: leaderReconcileFn(w.reconcile, { isLeading: () => leading, signal: new AbortController().signal }, () => undefined),
      logger: silentLogger(),
      resyncMs: 2_000_000_000,
      selfHeal: false,
      clock,
    });
    loops.push(loop);
    loop.submit({ ...(await rev('r1', 'a')), observedAt: new Date(clock.now()).toISOString() });
    await loop.idle();
    clock.advance(3 * 86_400_000); // the old leader led for three days
    leading = true;
    const release = w.hold();
    loop.submitAgain(loop.snapshot().lastGood!); // run.ts onElected
    await until(() => w.calls.length === 2);
    expect(loop.waitingForMs()).toBe(0);
    expect(loop.snapshot().waiting?.since).toBe(new Date(clock.now()).toISOString());
    release();
    await loop.idle();
    expect(loop.waitingForMs()).toBeUndefined();
  });

  it('a revision the standby only planned is not reported applied (/status lastApplied, the metric); once it leads, it is', async () => {
    const w = world();
    let leading = false;
    const resubmitted: Revision[] = [];
    const loop = new ReconcileLoop({
      reconcile: leaderReconcileFn(w.reconcile, { isLeading: () => leading, signal: new AbortController().signal }, (r) => resubmitted.push(r)),
      logger: silentLogger(),
      resyncMs: 60_000,
      selfHeal: false,
      retryBaseMs: 20,
      retryMaxMs: 100,
    });
    loops.push(loop);
    loop.submit(await rev('r1', 'a'));
    await until(() => loop.snapshot().lastSuccess !== undefined);
    expect(w.live.value).toBe(''); // planned only
    expect(loop.snapshot().lastApplied).toBeUndefined();
    leading = true;
    loop.submit(await rev('r2', 'b'));
    await until(() => loop.snapshot().lastApplied?.revision === 'r2');
    expect(w.live.value).toBe('b');
  });
});
