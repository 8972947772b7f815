/** editError / deleteError after acceptance, the poll interval, and --concurrency (sandbox over HTTP). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nextInterval } from '../../src/apply/poll.js';
import { rig, lakeManifest, sqlManifest, type Rig } from './inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig();
  Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-st-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-st-2', GOVOPS_SECRET_LAKE_TOKEN: 'tok-st-3' });
});
afterEach(async () => {
  await r.close();
});

async function failNext(operation: 'edit' | 'delete'): Promise<void> {
  const res = await fetch(`${r.sandbox.url}/_sandbox/fail-next`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: r.sandbox.adminToken },
    body: JSON.stringify({ operation }),
  });
  expect(res.status).toBe(200);
}

describe('status errors after the real call', () => {
  it('editError: the update fails with the validation results; the next apply retries the PUT and succeeds', async () => {
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    await failNext('edit');
    const res = await r.run();
    expect(res.ok).toBe(false);
    expect(res.outcomes[0]).toMatchObject({ action: 'update', result: 'failed', liveId: '1' });
    expect(res.outcomes[0]!.error).toMatch(/update ended in status editError/);
    expect(res.outcomes[0]!.validation?.length).toBeGreaterThan(0);
    expect(r.lines()).toContain('GET /integrations/1/status 200');
    const again = await r.run();
    expect(again.ok).toBe(true);
    expect((await r.api.getIntegration('1')).config.httpPath).toBe('/sql/2');
  });

  it('deleteError: the prune fails, the resource stays owned (state kept) and is deleted by the next apply', async () => {
    const manualSteps = 'trust'; // the delete script is trusted to have run (the gate: manual-steps tests)
    await r.write('a.yaml', sqlManifest('sql', 'db.example.com', { deleteCreds: false, autoBootstrap: false }));
    expect((await r.run({ manualSteps })).ok).toBe(true);
    await r.remove('a.yaml');
    await failNext('delete');
    const res = await r.run({ prune: true, allowEmpty: true, manualSteps });
    expect(res.ok).toBe(false);
    expect(res.outcomes[0]).toMatchObject({ action: 'delete', result: 'failed' });
    expect(res.outcomes[0]!.error).toMatch(/delete ended in status deleteError/);
    expect((await r.state()).resources.map((x) => x.name)).toEqual(['sql']);
    const again = await r.run({ prune: true, allowEmpty: true, manualSteps });
    expect(again.ok, again.error).toBe(true);
    expect(await r.api.listIntegrations()).toEqual([]);
    expect((await r.state()).resources).toEqual([]);
  });
});

describe('an error status is never a silent no-op', () => {
  it('deleteError of an integration whose manifest is kept (the govops/delete taken back): the next plan fixes it with a PUT, as for createError and editError', async () => {
    const del = '    govops/delete: "true"';
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com').replace('  name: lake\n', `  name: lake\n  annotations:\n${del}\n`));
    await failNext('delete');
    const res = await r.run({ prune: true });
    expect(res.outcomes[0]).toMatchObject({ action: 'delete', result: 'failed', code: 'GOVOPS_STATUS_ERROR' });
    expect((await r.api.getIntegrationStatus('1')).status).toBe('deleteError');
    // the operator keeps it after all: the manifest without the annotation
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    const plan = await r.run({ apply: false });
    expect(plan.changed).toBe(true);
    expect(plan.plan!.changes[0]).toMatchObject({ action: 'update', liveId: '1', reasons: [{ code: 'fix-status', message: 'status deleteError: fixed by PUT' }] });
    const fixed = await r.run();
    expect(fixed.ok, fixed.error).toBe(true);
    expect((await r.api.getIntegrationStatus('1')).status).toBe('enabled');
    expect((await r.run({ apply: false })).changed).toBe(false);
  });
});

describe('polling and concurrency', () => {
  it('the poll interval starts small, doubles and is capped', () => {
    const seq = [100];
    while (seq.length < 8) seq.push(nextInterval(seq.at(-1)!, 1000));
    expect(seq).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 1000]);
  });

  it('--concurrency 1: one dry run or write at a time, each write after its dry run; slots are not held through transitions', async () => {
    for (const n of [1, 2, 3]) await r.write(`l${n}.yaml`, lakeManifest(`lake${n}`, `lake${n}.example.com`));
    const res = await r.run({ concurrency: 1, pollListThreshold: Infinity });
    expect(res.ok).toBe(true);
    const writes = r.sandbox.requests().filter((q) => q.method === 'POST' && q.path === '/integrations');
    expect(writes).toHaveLength(6);
    // never two at once: each starts after the one before it was answered (log times are answer times)
    for (let i = 1; i < writes.length; i++) {
      expect(Date.parse(writes[i]!.time) - writes[i]!.durationMs).toBeGreaterThanOrEqual(Date.parse(writes[i - 1]!.time) - 1);
    }
    // every create comes after a dry run (#dry runs >= #creates at every point)
    let dry = 0;
    for (const q of writes) {
      if (q.query.dryRun === 'true') {
        dry++;
        continue;
      }
      expect(dry).toBeGreaterThan(0);
      dry--;
    }
    // all three creates are sent before any of them settles (transitions take 30 ms; the poller waits)
    const blocks = r.lines().filter((l) => l.startsWith('POST') || l.includes('/status')).map((l) => (l.startsWith('POST /integrations?dryRun') ? 'D' : l.startsWith('POST') ? 'C' : 'S'));
    expect(blocks.join('').replace(/S+/g, '')).toMatch(/^[DC]{6}$/);
  });

  it('with --concurrency 3 the three resources start together', async () => {
    for (const n of [1, 2, 3]) await r.write(`l${n}.yaml`, lakeManifest(`lake${n}`, `lake${n}.example.com`));
    const res = await r.run({ concurrency: 3 });
    expect(res.ok).toBe(true);
    const blocks = r.lines().filter((l) => l.startsWith('POST') || l.includes('/status')).map((l) => (l.startsWith('POST /integrations?dryRun') ? 'D' : l.startsWith('POST') ? 'C' : 'S'));
    expect(blocks.join(''), blocks.join('')).toMatch(/^[DC]*D[DC]*D[DC]*D/); // all three started before any poll (sequential would be DCSDCS...)
  });
});

describe('an accepted create whose status cannot be read', () => {
  it('fails with the poll\'s error and still names the integration it created (liveId), as a settle timeout does', async () => {
    await r.write('b.yaml', lakeManifest('lake', 'lake.example.com'));
    // every status poll answered 503 (after the client's retries): the wait gives up after 4 in a row
    r.sandbox.faults.add({ type: 'error', status: 503, method: 'GET', path: '/integrations/:id/status' });
    const res = await r.run();
    expect(res.ok).toBe(false);
    expect(res.outcomes[0]).toMatchObject({ action: 'create', result: 'failed', liveId: '1' });
    expect((await r.state()).resources).toEqual([expect.objectContaining({ name: 'lake', id: '1' })]);
  });
});
