/** Fault injection: latency, error statuses with Retry-After, dropped connections, forced 409s, stuck transitions. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { FaultSet, pathMatches } from '../../src/sandbox/faults.js';
import { bodyFor, call, settle, sleep, start } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 40 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.reset());

const addFault = (body: unknown) => call(sb, 'POST', '/_sandbox/faults', { body });

describe('fault rules over the control API', () => {
  it('error with count: the next N matching requests fail with the status and Retry-After, then it expires', async () => {
    const r = await addFault({ type: 'error', method: 'GET', path: '/integrations', status: 503, retryAfter: 2, count: 2 });
    expect(r.status).toBe(200);
    expect(r.body.rules).toHaveLength(1);
    for (let i = 0; i < 2; i++) {
      const f = await call(sb, 'GET', '/integrations');
      expect(f.status).toBe(503);
      expect(f.headers.get('retry-after')).toBe('2');
      expect(f.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
    }
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
    expect((await call(sb, 'GET', '/_sandbox/faults')).body.rules).toEqual([]);
  });

  it('matches by method and route pattern only', async () => {
    await addFault({ type: 'error', method: 'GET', path: '/integrations/:id', status: 429 });
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    expect(c.status).toBe(200);
    expect((await call(sb, 'GET', `/integrations/${c.body.id}`)).status).toBe(429);
    expect((await call(sb, 'GET', `/integrations/${c.body.id}/status`)).status).toBe(200);
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
  });

  it('drop destroys the connection (the client sees a network error) and is logged with status 0', async () => {
    await addFault({ type: 'drop', path: '/integrations', count: 1 });
    await expect(fetch(`${sb.url}/integrations`, { headers: { authorization: sb.adminToken } })).rejects.toThrow();
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
    const log = sb.requests();
    expect(log[0]).toMatchObject({ method: 'GET', path: '/integrations', status: 0 });
    expect(log[1]).toMatchObject({ status: 200 });
  });

  it('conflict forces a 409 error body', async () => {
    await addFault({ type: 'conflict', method: 'POST', path: '/integrations', count: 1 });
    const r = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('Conflict');
    expect((await call(sb, 'GET', '/integrations')).body).toEqual([]);
    expect((await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') })).status).toBe(200);
  });

  it('latency delays matching requests', async () => {
    await addFault({ type: 'latency', path: '/integrations*', latencyMs: 150 });
    const t0 = Date.now();
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('latency holds many requests at once (a client at concurrency 32) without a listener-leak warning', async () => {
    // each held request listens on the sandbox's "closed" signal until its delay ends: 11 at once drew Node's
    // MaxListenersExceededWarning, as if listeners leaked (they do not: each is removed when its delay ends)
    const own = await start();
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      own.faults.add({ type: 'latency', method: 'GET', path: '/integrations', latencyMs: 100 });
      const answers = await Promise.all(Array.from({ length: 16 }, () => call(own, 'GET', '/integrations')));
      expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await own.close();
    }
  });

  it('close() ends a request held by a latency fault: nothing of it runs (or waits) after the sandbox stopped', async () => {
    const own = await start();
    const timers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    own.faults.add({ type: 'latency', method: 'POST', latencyMs: 600_000, count: 1 });
    const req = call(own, 'POST', '/integrations', { body: bodyFor('distributed_sql') }).catch((err: unknown) => err);
    while (own.faults.list().length > 0) await new Promise((r) => setImmediate(r)); // the request is held now
    expect(timers()).toBe(before + 1);
    await own.close();
    expect(await req).toBeInstanceOf(Error); // its connection was closed
    // The held request's timer is gone: it will not create the integration in a stopped sandbox ten minutes on.
    expect(timers()).toBe(before);
    expect(own.integrations.size).toBe(0);
  });

  it('control routes are never faulted; DELETE /_sandbox/faults clears; DELETE /_sandbox/faults/:id removes one', async () => {
    const a = await addFault({ type: 'error', path: '*' });
    expect((await call(sb, 'GET', '/_sandbox/health')).status).toBe(200);
    expect((await call(sb, 'GET', '/integrations')).status).toBe(503);
    const id = a.body.added[0].id as number;
    expect((await call(sb, 'DELETE', `/_sandbox/faults/${id}`)).status).toBe(200);
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
    await addFault([{ type: 'error' }, { type: 'drop' }]);
    expect((await call(sb, 'GET', '/_sandbox/faults')).body.rules).toHaveLength(2);
    await call(sb, 'DELETE', '/_sandbox/faults');
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
  });

  it('rejects invalid rules with 400', async () => {
    expect((await addFault({ type: 'explode' })).status).toBe(400);
    expect((await addFault({ type: 'error', rate: 2 })).status).toBe(400);
    expect((await addFault({ type: 'latency' })).status).toBe(400);
  });

  it('a refused body changes nothing: stuckTransitions is not applied when a rule beside it is invalid', async () => {
    expect((await addFault({ rules: [{ type: 'latency', latencyMs: 5 }, { type: 'explode' }], stuckTransitions: true })).status).toBe(400);
    expect((await addFault({ rules: 'not-a-list', stuckTransitions: ['deleting'] })).status).toBe(400);
    expect(sb.faults.stuckTransitions).toBe(false);
    expect(sb.faults.list()).toEqual([]);
  });

  it('stuck transitions hold integrations until released', async () => {
    await addFault({ stuckTransitions: true });
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    await sleep(150);
    expect((await call(sb, 'GET', `/integrations/${c.body.id}/status`)).body.status).toBe('creating');
    await addFault({ stuckTransitions: false });
    expect(await settle(sb, c.body.id)).toBe('enabled');
  });

  it('stuckTransitions can hold only some statuses (deletes hang, creates complete)', async () => {
    const r = await addFault({ stuckTransitions: ['deleting'] });
    expect(r.body).toMatchObject({ stuckTransitions: true, stuckStatuses: ['deleting'] });
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('object_store') });
    expect(await settle(sb, c.body.id)).toBe('enabled');
    expect((await call(sb, 'DELETE', `/integrations/${c.body.id}`)).status).toBe(200);
    await sleep(150);
    expect((await call(sb, 'GET', `/integrations/${c.body.id}/status`)).body.status).toBe('deleting');
    expect((await addFault({ stuckTransitions: ['bogus'] })).status).toBe(400);
    await call(sb, 'DELETE', '/_sandbox/faults');
    expect(await settle(sb, c.body.id)).toBe('removed');
  });

  it('POST /_sandbox/transitions/finish completes pending transitions now', async () => {
    sb.setStuckTransitions(true);
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    const r = await call(sb, 'POST', '/_sandbox/transitions/finish');
    expect(r.body.completed).toBe(1);
    expect((await call(sb, 'GET', `/integrations/${c.body.id}/status`)).body.status).toBe('enabled');
  });
});

describe('FaultSet', () => {
  it('rate uses the random source; rules apply in order, latency adds up', () => {
    let next = 0.5;
    const set = new FaultSet(() => next);
    set.add({ type: 'latency', latencyMs: 10 });
    set.add({ type: 'latency', latencyMs: 5, path: '/a' });
    set.add({ type: 'error', rate: 0.4, status: 500 });
    expect(set.decide('GET', undefined, '/a')).toEqual({ delayMs: 15 });
    next = 0.1;
    expect(set.decide('GET', undefined, '/b')).toEqual({ delayMs: 10, action: { type: 'error', status: 500 } });
  });

  it('an exclusive rule that fires is the only one applied to the request (e.g. a slow create that must land)', () => {
    const set = new FaultSet(() => 0);
    set.add({ type: 'latency', latencyMs: 7 });
    set.add({ type: 'latency', method: 'POST', path: '/webhooks', latencyMs: 2500, count: 1, exclusive: true });
    set.add({ type: 'error', status: 503 });
    expect(set.decide('POST', '/webhooks', '/webhooks')).toEqual({ delayMs: 2500 });
    expect(set.decide('POST', '/webhooks', '/webhooks')).toEqual({ delayMs: 7, action: { type: 'error', status: 503 } });
  });

  it('a counted rule that an exclusive one overrode did not fire: its count is kept for the next request', () => {
    const set = new FaultSet(() => 0);
    set.add({ type: 'error', status: 500, count: 1 });
    set.add({ type: 'latency', latencyMs: 10, count: 1 });
    set.add({ type: 'latency', method: 'POST', path: '/webhooks', latencyMs: 2500, count: 1, exclusive: true });
    expect(set.decide('POST', '/webhooks', '/webhooks')).toEqual({ delayMs: 2500 });
    // The error and the short latency were not applied to that request: they fire for the next one.
    expect(set.decide('POST', '/webhooks', '/webhooks')).toEqual({ delayMs: 10, action: { type: 'error', status: 500 } });
    expect(set.list()).toEqual([]);
  });

  it('pathMatches: *, prefix*, pattern, concrete path', () => {
    expect(pathMatches('*', undefined, '/x')).toBe(true);
    expect(pathMatches('/integrations*', undefined, '/integrations/3')).toBe(true);
    expect(pathMatches('/integrations/:id', '/integrations/:id', '/integrations/3')).toBe(true);
    expect(pathMatches('/integrations/3', '/integrations/:id', '/integrations/3')).toBe(true);
    expect(pathMatches('/integrations/:id', '/integrations', '/integrations')).toBe(false);
  });
});
