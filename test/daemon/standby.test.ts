/**
 * A standby replica plans the revisions a leader would apply, and applies the one it planned once it leads
 * (`leaderReconcileFn`). It remembers the newest deferred revisions only: a standby that never leads keeps a bounded
 * set, not one id per revision for its whole life.
 */
import { describe, expect, it } from 'vitest';
import { DEFERRED_KEPT, leaderReconcileFn } from '../../src/daemon/standby.js';
import type { ReconcileRequest } from '../../src/daemon/loop.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { silentLogger } from '../../src/log.js';

function harness() {
  let leading = false;
  const calls: Array<{ id: string; apply: boolean }> = [];
  const resubmitted: string[] = [];
  const fn = leaderReconcileFn(
    async (req) => {
      calls.push({ id: req.revision.id, apply: req.apply });
      return { ok: true, stage: 'done', diagnostics: [], outcomes: [], changed: true, startedAt: '', finishedAt: '' } as unknown as ReconcileResult;
    },
    { isLeading: () => leading, signal: new AbortController().signal },
    (r) => resubmitted.push(r.id),
  );
  const run = (id: string, apply: boolean, reason: ReconcileRequest['reason'] = 'revision') =>
    fn({ revision: { id, root: '/', paths: ['.'] } as never, apply, reason, signal: new AbortController().signal, forceSignal: new AbortController().signal, logger: silentLogger() });
  return { run, calls, resubmitted, lead: () => (leading = true) };
}

describe('a standby replica', () => {
  it('plans without applying, reports no change of its own, and applies a deferred revision once it leads', async () => {
    const h = harness();
    const planned = await h.run('r1', true);
    expect(h.calls.at(-1)).toEqual({ id: 'r1', apply: false });
    expect(planned.changed).toBe(false);
    h.lead();
    await h.run('r1', false);
    expect(h.calls.at(-1)).toEqual({ id: 'r1', apply: true });
    // applied once: a later plan of it as leader is a plan again
    await h.run('r1', false);
    expect(h.calls.at(-1)).toEqual({ id: 'r1', apply: false });
  });

  it(`remembers the newest ${DEFERRED_KEPT} deferred revisions, not every one`, async () => {
    const h = harness();
    for (let i = 0; i < 1000; i++) await h.run(`r${i}`, true);
    h.lead();
    await h.run('r999', false);
    expect(h.calls.at(-1)).toEqual({ id: 'r999', apply: true });
    await h.run(`r${1000 - DEFERRED_KEPT}`, false);
    expect(h.calls.at(-1)).toEqual({ id: `r${1000 - DEFERRED_KEPT}`, apply: true });
    await h.run(`r${999 - DEFERRED_KEPT}`, false);
    expect(h.calls.at(-1)).toEqual({ id: `r${999 - DEFERRED_KEPT}`, apply: false });
    await h.run('r0', false);
    expect(h.calls.at(-1)).toEqual({ id: 'r0', apply: false });
  });
});
