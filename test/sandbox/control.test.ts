/** Request log, reset, out-of-band edits, lifecycle events, persistence across restarts. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bearer, bodyFor, call, settle, start } from './harness.js';
import { ManualClock } from '../helpers/clock.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ transitionMs: 30 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.reset());

describe('request log', () => {
  it('records method, path, query and status of API calls (not control calls); clearable', async () => {
    await call(sb, 'POST', '/integrations?dryRun=true', { body: bodyFor('lakehouse') });
    await call(sb, 'GET', '/integrations/77');
    await call(sb, 'GET', '/_sandbox/health');
    const r = await call(sb, 'GET', '/_sandbox/requests');
    expect(r.body.requests.map((e: Record<string, unknown>) => [e.method, e.path, e.query, e.status])).toEqual([
      ['POST', '/integrations', { dryRun: 'true' }, 200],
      ['GET', '/integrations/77', {}, 404],
    ]);
    expect(typeof r.body.requests[0].time).toBe('string');
    expect(sb.requests()).toHaveLength(2);
    await call(sb, 'DELETE', '/_sandbox/requests');
    expect(sb.requests()).toEqual([]);
    await call(sb, 'GET', '/integrations');
    sb.clearRequests();
    expect((await call(sb, 'GET', '/_sandbox/requests')).body.requests).toEqual([]);
  });

  it('logs auth failures too', async () => {
    await call(sb, 'GET', '/integrations', { token: null });
    expect(sb.requests()[0]).toMatchObject({ path: '/integrations', status: 401 });
  });
});

describe('reset and out-of-band edits', () => {
  it('POST /_sandbox/reset forgets integrations, faults and rules', async () => {
    await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    await call(sb, 'POST', '/_sandbox/faults', { body: { type: 'latency', latencyMs: 1, path: '/x' } });
    expect((await call(sb, 'POST', '/_sandbox/reset')).status).toBe(200);
    expect((await call(sb, 'GET', '/integrations')).body).toEqual([]);
    expect((await call(sb, 'GET', '/_sandbox/faults')).body.rules).toEqual([]);
    const again = await call(sb, 'POST', '/integrations', { body: bodyFor('lakehouse') });
    expect(again.body.id).toBe('1');
  });

  it('PATCH /_sandbox/integrations/:id merges into the stored config (drift) and can set status', async () => {
    const c = await call(sb, 'POST', '/integrations', { body: bodyFor('cloud_warehouse') });
    await settle(sb, c.body.id);
    const p = await call(sb, 'PATCH', `/_sandbox/integrations/${c.body.id}`, {
      body: { config: { warehouse: 'DRIFTED', audit: { enabled: true } } },
    });
    expect(p.status).toBe(200);
    expect(p.body.config.password).toBe('********');
    const got = await call(sb, 'GET', `/integrations/${c.body.id}`);
    expect(got.body.config.warehouse).toBe('DRIFTED');
    expect(got.body.config.audit).toEqual({ enabled: true, historicalIngestionMonths: 3 });
    await call(sb, 'PATCH', `/_sandbox/integrations/${c.body.id}`, { body: { status: 'editError' } });
    expect((await call(sb, 'GET', `/integrations/${c.body.id}/status`)).body.status).toBe('editError');
    expect((await call(sb, 'PATCH', '/_sandbox/integrations/999', { body: {} })).status).toBe(404);
  });
});

describe('lifecycle events', () => {
  let receiver: Server;
  let received: Array<{ notificationType?: string; body: string }> = [];
  afterEach(() => {
    received = [];
  });
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push({ body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  it('emits healthCheckFailed on createError and healthCheckResolved when it is fixed', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const w = await call(sb, 'POST', '/webhooks', {
      token: bearer(sb.adminToken),
      body: { webhooks: [{ url, name: 'health', global: false, notificationType: ['healthCheckFailed', 'healthCheckResolved'], actionType: 'triggered' }] },
    });
    expect(w.status).toBeLessThan(300);
    const body = bodyFor('sql_analytics');
    (body.config as Record<string, unknown>).host = 'h.late-fail.example';
    const c = await call(sb, 'POST', '/integrations', { body });
    expect(await settle(sb, c.body.id)).toBe('createError');
    await sb.webhooks.idle();
    expect(received).toHaveLength(1);
    expect(received[0]!.body).toContain('healthCheckFailed');
    await call(sb, 'PUT', `/integrations/${c.body.id}`, { body });
    expect(await settle(sb, c.body.id)).toBe('enabled');
    await sb.webhooks.idle();
    expect(received).toHaveLength(2);
    expect(received[1]!.body).toContain('healthCheckResolved');
    expect(received.map((r) => r.body).join('')).not.toContain('sql-secret');
  });
});

describe('the clock option', () => {
  it("is the time of everything the sandbox dates: integrations, data sources, webhooks and their history", async () => {
    const clock = new ManualClock(Date.parse('2030-05-01T10:00:00.000Z'));
    const own = await start({ clock });
    try {
      const at = '2030-05-01T10:00:00.000Z';
      const hook = { url: 'http://127.0.0.1:9/x', name: 'w', global: true, notificationType: ['tagCreated'], actionType: 'triggered' };
      const created = await call(own, 'POST', '/webhooks', { token: bearer(own.adminToken), body: { webhooks: [hook] } });
      expect(created.body.createdWebhooks[0]).toMatchObject({ createdAt: at, updatedAt: at });
      own.webhooks.emit('tagCreated', {});
      await own.webhooks.idle();
      const history = await call(own, 'GET', '/webhooks/history?includeGlobal=true', { token: bearer(own.adminToken) });
      expect(history.body.records.map((r: { createdAt: string }) => r.createdAt)).toEqual([at]);
      const seeded = await call(own, 'POST', '/_sandbox/webhooks/history', { body: { webhookId: 1, count: 2, stepMs: 1000 } });
      expect(seeded.body).toMatchObject({ firstCreatedAt: '2030-05-01T09:59:59.000Z', lastCreatedAt: at });
      expect(own.requests().map((r) => r.time)).toEqual([at, at]); // the request log too
    } finally {
      await own.close();
    }
  });
});

describe('persistence', () => {
  it('survives a restart with --data: integrations, ids, pending transitions, webhooks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-data-'));
    const dataFile = join(dir, 'state.json');
    try {
      const a = await start({ dataFile, transitionMs: 60_000, adminToken: 'adm', userToken: 'usr' });
      const c1 = await call(a, 'POST', '/integrations', { body: bodyFor('lakehouse') });
      a.finishTransitions();
      const c2 = await call(a, 'POST', '/integrations', { body: bodyFor('sql_analytics') });
      const w = await call(a, 'POST', '/webhooks', {
        token: bearer('adm'),
        body: { webhooks: [{ url: 'http://127.0.0.1:9/x', name: 'w', global: false, notificationType: ['tagCreated'], actionType: 'triggered' }] },
      });
      expect(w.status).toBeLessThan(300);
      await a.close();
      expect(statSync(dataFile).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['state.json']);
      expect(JSON.parse(readFileSync(dataFile, 'utf8')).version).toBe(1);

      const b = await start({ dataFile, transitionMs: 30, adminToken: 'adm', userToken: 'usr' });
      try {
        const list = await call(b, 'GET', '/integrations');
        expect(list.body.map((i: { id: string; status: string }) => [i.id, i.status])).toEqual([
          [c1.body.id, 'enabled'],
          [c2.body.id, 'creating'],
        ]);
        expect(list.body[1].config.password).toBe('********');
        expect((await call(b, 'GET', '/webhooks', { token: bearer('adm') })).body).toHaveLength(1);
        const c3 = await call(b, 'POST', '/integrations', { body: bodyFor('sql_analytics', 3) });
        expect(Number(c3.body.id)).toBe(Number(c2.body.id) + 1);
        // The pending create of the first run still completes (its deadline is kept; rescheduled on load).
        await b.finishTransitions();
        expect((await call(b, 'GET', `/integrations/${c2.body.id}/status`)).body.status).toBe('enabled');
      } finally {
        await b.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a malformed part of the data file stops the start with an error naming the file and the part; the file is not written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-data-'));
    const sql = { id: 1, type: 'sql_analytics', autoBootstrap: false, status: 'enabled', config: { host: 'a.example.com' } };
    const hook = { id: 1, url: 'http://127.0.0.1:9/x', name: 'w', global: true, notificationType: ['tagCreated'] };
    const integrations = (list: unknown[], extra: object = {}) => ({ nextId: 2, integrations: list, cleanups: [], ...extra });
    const cases: Array<[unknown, RegExp]> = [
      [{ integrations: { integrations: 5 } }, /integrations/],
      [{ integrations: integrations([{ id: 1, type: 'lakehouse' }]) }, /integrations\[0\]/],
      [{ integrations: integrations([{ ...sql, type: 'no_such_kind' }]) }, /integrations\[0\]/],
      [{ integrations: integrations([sql], { cleanups: 5 }) }, /cleanups/],
      [{ integrations: integrations([sql]), webhooks: { version: 1, webhooks: [hook], history: [] } }, /webhooks\[0\]/],
      [{ webhooks: { version: 1, webhooks: [{ ...hook, createdBy: 1 }], history: [{ id: 1, webhooksId: 1, request: {}, statusCode: 200 }] } }, /history\[0\]/],
      [{ integrations: integrations([sql]), dataSources: { nextId: 1, dataSources: 5 } }, /dataSources/],
      [{ integrations: integrations([sql]), dataSources: { nextId: 2, dataSources: [{ id: 1 }] } }, /dataSources\[0\]/],
    ];
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (const [i, [data, part]] of cases.entries()) {
        const dataFile = join(dir, `state-${i}.json`);
        const text = JSON.stringify({ version: 1, savedAt: '2026-01-01T00:00:00.000Z', ...(data as object) });
        writeFileSync(dataFile, text);
        const err = await start({ dataFile }).then(
          async (started) => void (await started.close()),
          (e: unknown) => e as Error,
        );
        expect(err, `case ${i}`).toBeInstanceOf(Error);
        expect(err!.message, `case ${i}`).toContain(dataFile);
        expect(err!.message, `case ${i}`).toMatch(part);
        // Nothing is left to save the half-restored state over the file the error names.
        expect(vi.getTimerCount(), `case ${i}`).toBe(0);
        expect(readFileSync(dataFile, 'utf8')).toBe(text);
      }
    } finally {
      vi.useRealTimers();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a save that fails at stop (or on save()) is an error, not a silent loss of the state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-data-'));
    const dataFile = join(dir, 'state.json');
    const a = await start({ dataFile });
    try {
      expect((await call(a, 'POST', '/integrations', { body: bodyFor('lakehouse') })).status).toBe(200);
      rmSync(dir, { recursive: true, force: true }); // the folder is gone: nothing can be written
      await expect(a.save()).rejects.toThrow(/ENOENT/);
    } finally {
      await expect(a.close()).rejects.toThrow(/ENOENT/);
    }
  });

  it('a start that fails to listen (port in use) leaves nothing running on the loaded state (npm start then starts on another port)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-data-'));
    const dataFile = join(dir, 'state.json');
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as AddressInfo).port;
    // An integration whose create was pending when the data file was saved: its transition is due at once.
    const pending = { id: 1, type: 'sql_analytics', autoBootstrap: false, status: 'creating', pendingUntil: 0, config: { host: 'a.example.com' }, validationResults: {} };
    writeFileSync(dataFile, JSON.stringify({ version: 1, integrations: { nextId: 2, integrations: [pending], cleanups: [] } }));
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await expect(start({ dataFile, port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // No transition timer, no save: a second start on the same file is the only one that acts on it.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await new Promise((r) => busy.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a data file of an unknown format', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-data-'));
    try {
      const dataFile = join(dir, 'state.json');
      (await import('node:fs')).writeFileSync(dataFile, '{"version": 99}');
      await expect(start({ dataFile })).rejects.toThrow(/unknown format/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
