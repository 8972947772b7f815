/**
 * The delivery policy (--deliver-to): by default deliveries reach loopback only, and a blocked delivery
 * is recorded (500 EBLOCKED) without any name lookup or connection. Real sandboxes, real receivers on
 * 127.0.0.1 / 127.0.0.2; every other name is resolved by an injected, recording lookup to 127.0.0.1,
 * so nothing ever leaves the machine.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { checkHost, loopbackLookup, parseDeliveryHosts } from '../../src/sandbox/webhooks/hosts.js';
import { ADMIN, createHooks, fire, hook, startHarness, startReceiver, type Harness, type Receiver } from './webhooks-helpers.js';

const BLOCKED = { statusCode: 500, response: { body: { code: 'EBLOCKED', connect: false } } };

/** A lookup that records every name asked and answers 127.0.0.1 (never the system resolver). */
function recordingLookup(): { lookup: LookupFunction; calls: string[] } {
  const calls: string[] = [];
  const lookup = ((hostname: string, options: LookupOptions, cb: (e: null, a: string | LookupAddress[], f?: number) => void) => {
    calls.push(hostname);
    process.nextTick(() => (options.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)));
  }) as LookupFunction;
  return { lookup, calls };
}

function portOf(url: string): string {
  return new URL(url).port;
}

async function history(h: Harness): Promise<any[]> {
  const res = await h.call('GET', '/webhooks/history?sortField=id&sortOrder=asc&pageSize=100', ADMIN);
  expect(res.status).toBe(200);
  return res.body.records;
}

function byName(records: any[], name: string): any {
  const r = records.find((x) => x.name === name);
  expect(r, `record of ${name}`).toBeDefined();
  return r;
}

describe('policy parsing and host checks (pure)', () => {
  it('the default allows loopback addresses and localhost only, in every spelling the URL parser produces', () => {
    const p = parseDeliveryHosts();
    expect(p.entries).toEqual(['127.0.0.0/8', '::1', 'localhost']);
    for (const url of ['http://127.0.0.1/', 'http://127.9.8.7/', 'http://[::1]/', 'http://localhost/', 'http://LOCALHOST./', 'http://[::ffff:127.0.0.1]/', 'http://2130706433/', 'http://127.1/']) {
      expect(checkHost(p, new URL(url).hostname).allowed, url).toBe(true);
    }
    for (const url of ['https://hooks.example.com/x', 'http://0.0.0.0/', 'http://10.0.0.1/', 'http://[::2]/', 'http://localhost.example.com/', 'http://foo.localhost/', 'http://128.0.0.1/']) {
      expect(checkHost(p, new URL(url).hostname).allowed, url).toBe(false);
    }
    expect(checkHost(p, 'localhost')).toEqual({ allowed: true, host: 'localhost', via: 'localhost' });
    expect(checkHost(p, '127.0.0.1')).toEqual({ allowed: true, host: '127.0.0.1', via: 'ip' });
  });

  it('a list replaces the default: names, .suffixes, *.suffixes, addresses, CIDRs, loopback, none, *', () => {
    const p = parseDeliveryHosts('Hooks.Example.com, .internal.example.com,*.corp.test, 10.0.0.0/8, [fd00::1], 192.168.1.5');
    expect(p.entries).toEqual(['hooks.example.com', '.internal.example.com', '.corp.test', '10.0.0.0/8', 'fd00::1', '192.168.1.5']);
    const allowed = (h: string): boolean => checkHost(p, h).allowed;
    expect(allowed('hooks.example.com')).toBe(true);
    expect(allowed('api.hooks.example.com')).toBe(false); // a name is exact
    expect(allowed('a.b.internal.example.com')).toBe(true);
    expect(allowed('internal.example.com')).toBe(false); // a suffix matches sub-domains only
    expect(allowed('notinternal.example.com')).toBe(false);
    expect(allowed('internal.example.com.evil.test')).toBe(false);
    expect(allowed('x.corp.test')).toBe(true);
    expect(allowed('10.200.3.4')).toBe(true);
    expect(allowed('[fd00::1]')).toBe(true);
    expect(allowed('192.168.1.6')).toBe(false);
    expect(allowed('127.0.0.1')).toBe(false);
    expect(allowed('localhost')).toBe(false);
    expect(parseDeliveryHosts(['loopback', 'x.test']).entries).toEqual(['127.0.0.0/8', '::1', 'localhost', 'x.test']);
    const none = parseDeliveryHosts('none');
    expect(none.entries).toEqual([]);
    expect(checkHost(none, '127.0.0.1').allowed).toBe(false);
    const all = parseDeliveryHosts('*');
    expect(all.entries).toEqual(['*']);
    expect(checkHost(all, 'hooks.example.com')).toEqual({ allowed: true, host: 'hooks.example.com', via: 'name' });
    expect(checkHost(all, 'localhost')).toEqual({ allowed: true, host: 'localhost', via: 'localhost' });
  });

  it('rejects malformed entries with a message naming them', () => {
    expect(() => parseDeliveryHosts('')).toThrow(/empty host list/);
    expect(() => parseDeliveryHosts(' , ')).toThrow(/empty host list/);
    expect(() => parseDeliveryHosts('10.0.0.0/33')).toThrow(/"10.0.0.0\/33" is not a CIDR/);
    expect(() => parseDeliveryHosts('foo/8')).toThrow(/not a CIDR/);
    expect(() => parseDeliveryHosts('hooks.example.com:443')).toThrow(/ports are not part of the policy/);
    expect(() => parseDeliveryHosts('http://x.test')).toThrow(/is a URL; give the host only/);
    expect(() => parseDeliveryHosts('bad host')).toThrow(/"bad host"/);
  });

  it('localhost resolves to loopback without a resolver, per address family', async () => {
    const ask = (options: LookupOptions): Promise<unknown> =>
      new Promise((resolve, reject) =>
        loopbackLookup('localhost', options, (err, address, family) => (err ? reject(err) : resolve(options.all ? address : [address, family]))),
      );
    expect(await ask({ all: true })).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    expect(await ask({ family: 6 })).toEqual(['::1', 6]);
    expect(await ask({})).toEqual(['127.0.0.1', 4]);
  });
});

describe('default policy over real HTTP: loopback only', () => {
  let h: Harness;
  let rx: Receiver;
  const rec = recordingLookup();
  const logs: any[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line));
        cb();
      },
    });
    [h, rx] = await Promise.all([
      startHarness({ deliveryLookup: rec.lookup, logger: createLogger({ level: 'debug', destination: sink }) }),
      startReceiver(),
    ]);
  });
  afterAll(async () => {
    await h.close();
    await rx.close();
  });
  beforeEach(async () => {
    await h.control('POST', '/_sandbox/reset');
    rx.received.length = 0;
    rec.calls.length = 0;
    logs.length = 0;
  });

  it('records a delivery to https://hooks.example.com as EBLOCKED without a lookup; loopback receivers still get theirs', async () => {
    await createHooks(h, ADMIN, [
      hook('https://hooks.example.com/x', { name: 'outside', secret: 'never-sent-secret' }),
      hook(`${rx.url}/ip`, { name: 'ip' }),
      hook(`http://localhost:${portOf(rx.url)}/name`, { name: 'localhost' }),
    ]);
    expect(await fire(h, 'modelAccessRequested')).toMatchObject({ deliveries: 3 });
    const records = await history(h);
    expect(byName(records, 'outside')).toMatchObject({ ...BLOCKED, url: 'https://hooks.example.com/x' });
    expect(byName(records, 'ip')).toMatchObject({ statusCode: 200, response: {} });
    expect(byName(records, 'localhost')).toMatchObject({ statusCode: 200, response: {} });
    expect(rx.received.map((r) => r.path).sort()).toEqual(['/ip', '/name']);
    expect(rec.calls).toEqual([]); // localhost is pinned to loopback; the blocked name is never resolved
    const blocked = logs.filter((l) => l.host === 'hooks.example.com');
    expect(blocked).toHaveLength(1);
    expect(blocked[0]).toMatchObject({ level: 30, webhookId: expect.any(Number) });
    expect(blocked[0].msg).toContain('hooks.example.com');
    expect(JSON.stringify(logs)).not.toContain('never-sent-secret');
  });

  it('a retry obeys the policy too: a new EBLOCKED record, still no lookup; later blocks of a host log at debug', async () => {
    await createHooks(h, ADMIN, [hook('http://audit.example.com:8443/ingest', { name: 'outside' })]);
    await fire(h, 'modelAccessRequested');
    const [first] = await history(h);
    expect(first).toMatchObject(BLOCKED);
    const retry = await h.call('POST', `/webhooks/history/retry/${first.id}`, ADMIN);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ ...BLOCKED, url: 'http://audit.example.com:8443/ingest' });
    expect(retry.body.id).not.toBe(first.id);
    expect(rec.calls).toEqual([]);
    expect(logs.filter((l) => l.host === 'audit.example.com').map((l) => l.level)).toEqual([30, 20]);
  });

  it('another loopback address (127.0.0.2) is loopback and allowed', async () => {
    const rx2 = await startReceiver('127.0.0.2');
    try {
      await createHooks(h, ADMIN, [hook(`${rx2.url}/two`, { name: 'two' })]);
      await fire(h, 'modelAccessRequested');
      expect(byName(await history(h), 'two')).toMatchObject({ statusCode: 200 });
      expect(rx2.received.map((r) => r.path)).toEqual(['/two']);
    } finally {
      await rx2.close();
    }
  });
});

describe('explicit allow lists and * over real HTTP', () => {
  let rx1: Receiver;
  let rx2: Receiver;
  let h: Harness | undefined;
  beforeAll(async () => {
    [rx1, rx2] = await Promise.all([startReceiver('127.0.0.1'), startReceiver('127.0.0.2')]);
  });
  afterAll(async () => {
    await rx1.close();
    await rx2.close();
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    rx1.received.length = 0;
    rx2.received.length = 0;
  });

  it('a list allows exactly its entries: 127.0.0.2 and a .suffix pass, 127.0.0.1, localhost and other names are blocked', async () => {
    const rec = recordingLookup();
    h = await startHarness({ deliveryHosts: '127.0.0.2,.internal.example.com', deliveryLookup: rec.lookup });
    const p1 = portOf(rx1.url);
    await createHooks(h, ADMIN, [
      hook(`${rx2.url}/listed-ip`, { name: 'listed-ip' }),
      hook(`http://a.internal.example.com:${p1}/suffix`, { name: 'suffix' }),
      hook(`${rx1.url}/unlisted-ip`, { name: 'unlisted-ip' }),
      hook(`http://localhost:${p1}/localhost`, { name: 'localhost' }),
      hook(`http://internal.example.com.evil.test:${p1}/evil`, { name: 'evil' }),
    ]);
    await fire(h, 'modelAccessRequested');
    const records = await history(h);
    expect(byName(records, 'listed-ip')).toMatchObject({ statusCode: 200 });
    expect(byName(records, 'suffix')).toMatchObject({ statusCode: 200 });
    for (const name of ['unlisted-ip', 'localhost', 'evil']) expect(byName(records, name)).toMatchObject(BLOCKED);
    expect(rx2.received.map((r) => r.path)).toEqual(['/listed-ip']);
    expect(rx1.received.map((r) => r.path)).toEqual(['/suffix']); // reached through the injected lookup only
    expect(rec.calls).toEqual(['a.internal.example.com']);
  });

  it("'*' allows every host: any name is resolved (here by the injected lookup) and delivered", async () => {
    const rec = recordingLookup();
    h = await startHarness({ deliveryHosts: '*', deliveryLookup: rec.lookup });
    const p1 = portOf(rx1.url);
    await createHooks(h, ADMIN, [
      hook(`http://hooks.example.com:${p1}/star`, { name: 'star' }),
      hook(`${rx2.url}/ip`, { name: 'ip' }),
    ]);
    await fire(h, 'modelAccessRequested');
    const records = await history(h);
    expect(byName(records, 'star')).toMatchObject({ statusCode: 200 });
    expect(byName(records, 'ip')).toMatchObject({ statusCode: 200 });
    expect(rec.calls).toEqual(['hooks.example.com']);
    expect(rx1.received.map((r) => r.path)).toEqual(['/star']);
  });

  it('a bad policy is refused when the sandbox starts', async () => {
    await expect(startHarness({ deliveryHosts: 'hooks.example.com:443' })).rejects.toThrow(/ports are not part of the policy/);
  });
});
