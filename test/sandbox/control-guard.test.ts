/**
 * The sandbox's control API (`/_sandbox/...`) is no back door: the admin token (raw or Bearer) unless
 * --dev, never a cross-origin browser request, only JSON bodies (no text/plain "simple request" from any
 * origin); malformed request targets get 400, never 500.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bearer, call, start } from './harness.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const post = (s: SandboxHandle, path: string, headers: Record<string, string>, body?: string) =>
  fetch(`${s.url}${path}`, { method: 'POST', headers, ...(body !== undefined ? { body } : {}) });

describe('control API access', () => {
  it('without --dev: the admin token, raw or as Bearer; nothing else', async () => {
    sb = await start();
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: null })).status).toBe(401);
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: sb.userToken })).status).toBe(403);
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: 'guess' })).status).toBe(401);
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: sb.adminToken })).status).toBe(200);
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: bearer(sb.adminToken) })).status).toBe(200);
    // The refusal is an interface-style error body.
    const r = await call(sb, 'GET', '/_sandbox/requests', { token: null });
    expect(r.body).toMatchObject({ statusCode: 401, error: 'Unauthorized', message: expect.stringMatching(/admin token/) });
  });

  it('with --dev: no token needed', async () => {
    sb = await start({ dev: true });
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: null })).status).toBe(200);
  });

  it('refuses cross-origin browser requests and non-JSON bodies, even with --dev', async () => {
    sb = await start({ dev: true });
    const s = sb;
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ operation: 'edit' });
    // A page on another site: Origin, or Sec-Fetch-Site.
    expect((await post(s, '/_sandbox/fail-next', { ...json, origin: 'https://attacker.example' }, body)).status).toBe(403);
    expect((await post(s, '/_sandbox/reset', { origin: 'http://evil.localhost.example:80' })).status).toBe(403);
    expect((await post(s, '/_sandbox/reset', { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(s, '/_sandbox/reset', { origin: `http://127.0.0.1:${s.port + 1}` })).status).toBe(403);
    // text/plain JSON (a "simple request" needing no preflight) is refused from any origin, also without one.
    expect((await post(s, '/_sandbox/fail-next', { 'content-type': 'text/plain' }, body)).status).toBe(415);
    expect((await post(s, '/_sandbox/fail-next', { 'content-type': 'application/x-www-form-urlencoded' }, body)).status).toBe(415);
    expect(s.failures.next).toEqual([]);
    // The sandbox's own origin and plain clients (curl sends no Origin) are fine.
    expect((await post(s, '/_sandbox/fail-next', { ...json, origin: `http://127.0.0.1:${s.port}` }, body)).status).toBe(200);
    expect((await post(s, '/_sandbox/fail-next', { ...json, origin: `http://localhost:${s.port}` }, body)).status).toBe(200);
    expect((await post(s, '/_sandbox/fail-next', json, body)).status).toBe(200);
    expect(s.failures.next).toHaveLength(3);
  });

  it('a control path spelled with empty segments (//_sandbox/..., /_sandbox//faults) is still guarded', async () => {
    sb = await start();
    const s = sb;
    const rule = JSON.stringify({ type: 'error', status: 500 });
    // The router ignores empty segments, so these reach the control routes: they must pass the same guard.
    for (const path of ['//_sandbox/faults', '///_sandbox/faults', '/_sandbox//faults']) {
      expect((await post(s, path, { 'content-type': 'application/json' }, rule)).status, path).toBe(401);
      expect((await post(s, path, { 'content-type': 'text/plain', origin: 'https://evil.example' }, rule)).status, path).toBe(403);
    }
    expect((await post(s, '//_sandbox/reset', {})).status).toBe(401);
    expect(s.faults.list()).toEqual([]);
    // ... and they are control requests: not faulted, not logged.
    s.faults.add({ type: 'error', status: 503 });
    const ok = await fetch(`${s.url}//_sandbox/faults`, { headers: { authorization: s.adminToken } });
    expect(ok.status).toBe(200);
    expect(s.requests()).toEqual([]);
  });

  it("with --dev, a webhook whose URL is the sandbox's own control API cannot drive it (a manifest author's URL)", async () => {
    sb = await start({ dev: true });
    const s = sb;
    const created = await call(s, 'POST', '/webhooks', {
      token: bearer(s.adminToken),
      body: {
        webhooks: ['/_sandbox/reset', '/_sandbox/transitions/finish', '//_sandbox/reset'].map((path, i) => ({
          name: `self-${i}`,
          url: `${s.url}${path}`,
          global: true,
          actionType: 'triggered',
          notificationType: ['ALL_NOTIFICATIONS'],
        })),
      },
    });
    expect(created.body.createdWebhooks).toHaveLength(3);
    s.failures.next.push({ operation: 'create', count: 1 });
    expect(s.webhooks.emit('modelCreated', {}).deliveries).toBe(3);
    await s.webhooks.idle();
    // Nothing was reset: the webhooks and the failure rule are still there, and each delivery was refused.
    expect(s.failures.next).toHaveLength(1);
    const history = await call(s, 'GET', '/webhooks/history?includeGlobal=true', { token: bearer(s.adminToken) });
    expect(history.body.records.map((r: { statusCode: number }) => r.statusCode)).toEqual([403, 403, 403]);
  });

  it('the service API itself is unchanged: integration calls keep their own auth', async () => {
    sb = await start();
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
    expect((await call(sb, 'GET', '/integrations', { token: null })).status).toBe(401);
  });
});

function rawStatus(port: number, target: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString()));
    const done = () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0));
    socket.on('close', done);
    socket.on('error', done);
    socket.write(`GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
  });
}

describe('malformed request targets', () => {
  it('GET //[ and friends get 400, never 500; the sandbox keeps serving', async () => {
    sb = await start();
    for (const target of ['//[', '//[::1', '//a b', 'integrations']) expect(await rawStatus(sb.port, target), target).toBe(400);
    expect((await call(sb, 'GET', '/integrations')).status).toBe(200);
  });
});
