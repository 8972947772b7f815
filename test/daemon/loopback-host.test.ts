/**
 * Issue 27: DNS-rebinding protection. The sandbox on loopback and the daemon under `npm start` answer only
 * requests whose Host header names loopback (localhost, 127.0.0.1, [::1], with a port or not): a page on
 * `evil.example` resolving to 127.0.0.1 gets 421. Raw requests, so the Host header is exactly what is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { silentLogger } from '../../src/log.js';
import { startHttpServer } from '../../src/daemon/server.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { hostHeaderAllowed } from '../../src/util/host-header.js';
import { rawRequest } from '../helpers/raw-http.js';
import { Cleanup } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const handlers = { ready: () => ({ ready: true }), status: () => ({ ok: true }), registry: new Registry(), onPush: () => true };

describe('loopback Host names only', () => {
  it('the sandbox: Host evil.example is 421 on the control API and the service API alike; loopback names are answered', async () => {
    const sandbox = await startSandbox({ port: 0, dev: true });
    cleanup.add(() => sandbox.close());
    const port = new URL(sandbox.url).port;
    for (const path of ['/_sandbox/requests', '/integrations']) {
      const evil = await rawRequest(sandbox.url, { host: 'evil.example', path, headers: { authorization: sandbox.adminToken } });
      expect(evil.status, path).toBe(421);
      expect(evil.body).toMatch(/DNS-rebinding/);
      expect((await rawRequest(sandbox.url, { host: `evil.example:${port}`, path })).status).toBe(421);
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost', 'LOCALHOST']) {
        expect((await rawRequest(sandbox.url, { host, path, headers: { authorization: sandbox.adminToken } })).status, host).toBe(200);
      }
    }
  });

  it('the daemon under npm start (loopbackOnly): 421 for another name; without the option (govops run) any Host', async () => {
    const guarded = await startHttpServer({ host: '127.0.0.1', port: 0, loopbackOnly: true }, handlers, silentLogger());
    cleanup.add(() => guarded.close());
    expect((await rawRequest(guarded.url, { host: 'evil.example', path: '/status' })).status).toBe(421);
    expect((await rawRequest(guarded.url, { host: 'evil.example', path: '/metrics' })).status).toBe(421);
    expect((await rawRequest(guarded.url, { host: `localhost:${guarded.port}`, path: '/status' })).status).toBe(200);
    const plain = await startHttpServer({ host: '127.0.0.1', port: 0 }, handlers, silentLogger());
    cleanup.add(() => plain.close());
    expect((await rawRequest(plain.url, { host: 'govops.example.com', path: '/healthz' })).status).toBe(200);
  });

  it('the rule: loopback names, the listen address itself, everything on a wildcard address', () => {
    expect(hostHeaderAllowed('127.0.0.1', 'evil.example')).toBe(false);
    expect(hostHeaderAllowed('127.0.0.1', 'localhost.evil.example:80')).toBe(false);
    expect(hostHeaderAllowed('127.0.0.1', '127.0.0.1.evil.example')).toBe(false);
    expect(hostHeaderAllowed('127.0.0.1', '[::1]')).toBe(true);
    expect(hostHeaderAllowed('10.1.2.3', '10.1.2.3:8088')).toBe(true);
    expect(hostHeaderAllowed('::1', '[::1]:8088')).toBe(true);
    expect(hostHeaderAllowed('0.0.0.0', 'anything.example')).toBe(true);
  });
});
