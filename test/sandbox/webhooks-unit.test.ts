/** Pure parts of the sandbox webhooks: signature, metadata, history query, concurrency limiter. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALL_NOTIFICATIONS } from '../../src/service/events.js';
import { createWebhookService, subscribers } from '../../src/sandbox/webhooks/index.js';
import { silentLogger } from '../../src/log.js';
import { WebhookStore } from '../../src/sandbox/webhooks/store.js';
import { Behaviours } from '../../src/sandbox/behaviours.js';
import { HistoryStore, Limiter } from '../../src/sandbox/webhooks/dispatcher.js';
import { deliver, signatureHeaders } from '../../src/sandbox/webhooks/delivery.js';
import { parseHistoryQuery, queryHistory } from '../../src/sandbox/webhooks/history.js';
import { buildMetadata } from '../../src/sandbox/webhooks/payload.js';
import type { HistoryRecord } from '../../src/sandbox/webhooks/types.js';

describe('signatureHeaders', () => {
  it('is HMAC-SHA1 / HMAC-SHA256 in hex (RFC 2202 / RFC 4231 test case 2)', () => {
    const h = signatureHeaders('Jefe', 'what do ya want for nothing?');
    expect(h['x-webhook-signature']).toBe('sha1=effcdf6ae5eb2fa2d27416d5f184df9c259a7c79');
    expect(h['x-webhook-signature-256']).toBe('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});

describe('buildMetadata', () => {
  it('fills every 2.13 field from the actor and defaults; the event overrides them; the type always wins', () => {
    expect(buildMetadata('modelCreated', {}, { userId: 7, userName: 'Gus' })).toEqual({
      modelId: null,
      actionBy: 7,
      modelType: null,
      targetUser: 7,
      projectName: null,
      targetGroup: null,
      actionByName: 'Gus',
      targetUserName: 'Gus',
      notifyInitiator: false,
      notificationType: 'modelCreated',
    });
    const m = buildMetadata('tagCreated', { targetUser: 9, extra: 'kept', notificationType: 'spoofed' }, undefined);
    expect(m).toMatchObject({ actionBy: null, targetUser: 9, extra: 'kept', notificationType: 'tagCreated' });
  });
});

function rec(id: number, over: Partial<HistoryRecord> = {}): HistoryRecord {
  return {
    id,
    request: { text: '', metadata: {}, webhookId: 1, webhookName: 'w' },
    response: {},
    statusCode: 200,
    notificationType: 'tagCreated',
    webhooksActivityId: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    webhooksId: 1,
    url: 'http://127.0.0.1/',
    name: 'w',
    actionType: 'triggered',
    createdBy: 1,
    global: false,
    ...over,
  };
}

describe('history query', () => {
  const admin = { role: 'admin' as const, userId: 1 };

  it('defaults: offset 0, pageSize 20, createdAt desc, includeUser true, includeGlobal false', () => {
    expect(parseHistoryQuery(new URLSearchParams())).toEqual({
      offset: 0,
      pageSize: 20,
      sortField: 'createdAt',
      sortOrder: 'desc',
      includeGlobal: false,
      includeUser: true,
    });
  });

  it('breaks ties of the sort field by id in the same direction', () => {
    const records = [rec(1), rec(2), rec(3, { createdAt: '2025-01-01T00:00:00.000Z' })];
    const desc = queryHistory(records, admin, parseHistoryQuery(new URLSearchParams()));
    expect(desc.records.map((r) => r.id)).toEqual([2, 1, 3]);
    const asc = queryHistory(records, admin, parseHistoryQuery(new URLSearchParams('sortOrder=asc')));
    expect(asc.records.map((r) => r.id)).toEqual([3, 1, 2]);
  });

  it('treats 2xx as success and everything else as failure', () => {
    const records = [rec(1, { statusCode: 204 }), rec(2, { statusCode: 302 }), rec(3, { statusCode: 500 })];
    const ok = queryHistory(records, admin, parseHistoryQuery(new URLSearchParams('successOrFailure=success')));
    expect(ok.records.map((r) => r.id)).toEqual([1]);
    const bad = queryHistory(records, admin, parseHistoryQuery(new URLSearchParams('successOrFailure=failure')));
    expect(bad.count).toBe(2);
  });
});

describe('HistoryStore.query (a selection kept between pages)', () => {
  const query = (s: string) => parseHistoryQuery(new URLSearchParams(s));
  const callers = [
    { role: 'admin' as const, userId: 1 },
    { role: 'user' as const, userId: 2 },
  ];

  it('pages as a fresh query of the records does, across additions, callers, sorts and filters (random)', () => {
    const queries = ['', 'sortOrder=asc', 'successOrFailure=failure&includeGlobal=true', 'sortField=statusCode&pageSize=3', 'includeUser=false&includeGlobal=true'];
    const op = fc.oneof(
      fc.record({ add: fc.record({ statusCode: fc.constantFrom(200, 500), global: fc.boolean(), createdBy: fc.constantFrom(1, 2), day: fc.integer({ min: 1, max: 3 }) }) }),
      fc.record({ q: fc.constantFrom(...queries), caller: fc.constantFrom(0, 1), offset: fc.nat(12) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const store = new HistoryStore();
        for (const o of ops) {
          if ('add' in o) {
            const { day, ...over } = o.add;
            store.add(rec(store.nextId++, { ...over, createdAt: `2026-01-0${day}T00:00:00.000Z` }));
          } else {
            const q = { ...query(o.q), offset: o.offset };
            const caller = callers[o.caller]!;
            expect(store.query(caller, q)).toEqual(queryHistory(store.records, caller, q));
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it("a reader's next page reuses the selection of the first (the records are not filtered and sorted again)", () => {
    const store = new HistoryStore();
    for (let i = 1; i <= 50; i++) store.add(rec(store.nextId++));
    const records = [...store.records];
    expect(store.query(callers[0]!, { ...query('pageSize=20'), offset: 0 }).count).toBe(50);
    // Records never change once added, and every addition goes through add(); the array itself is swapped here only
    // to tell a reused selection from a new one.
    store.records = [];
    const second = { ...query('pageSize=20'), offset: 20 };
    expect(store.query(callers[0]!, second)).toEqual(queryHistory(records, callers[0]!, second));
    expect(store.query(callers[0]!, query('sortOrder=asc')).count).toBe(0);
  });
});

describe('deliver', () => {
  it('a URL without an http(s) scheme, or none a URL parser reads, is recorded as EINVALIDURL (it rejected before)', async () => {
    for (const url of ['hooks.example.com/x', 'ftp://hooks.example.com/x', 'not a url']) {
      expect(await deliver({ url, rawBody: '{}', timeoutMs: 1000 })).toEqual({ statusCode: 500, response: { body: { code: 'EINVALIDURL', connect: false } } });
    }
  });

  it('an already aborted delivery is EABORTED, sent nowhere', async () => {
    const abort = new AbortController();
    abort.abort();
    expect(await deliver({ url: 'http://127.0.0.1:9/x', rawBody: '{}', timeoutMs: 1000, signal: abort.signal })).toMatchObject({ aborted: true, response: { body: { code: 'EABORTED' } } });
  });
});

describe('Limiter', () => {
  it('runs at most `max` tasks at once, in FIFO order', async () => {
    const limiter = new Limiter(3);
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const tasks = Array.from({ length: 20 }, (_, i) =>
      limiter.run(async () => {
        started.push(i);
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 2));
        active--;
        return i;
      }),
    );
    expect(await Promise.all(tasks)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(peak).toBe(3);
    expect(started).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('releases the slot when a task throws', async () => {
    const limiter = new Limiter(1);
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await limiter.run(async () => 'next')).toBe('next');
  });
});

describe('WebhookStore.listing (the subscribers of an event without a pass over every webhook)', () => {
  const TYPES = ['modelCreated', 'modelDeleted', 'healthCheckFailed', ALL_NOTIFICATIONS];
  const op = fc.oneof(
    fc.record({ create: fc.subarray(TYPES, { minLength: 1 }), owner: fc.integer({ min: 1, max: 3 }), global: fc.boolean() }),
    fc.record({ remove: fc.nat(30) }),
    fc.constant({ reload: true }),
  );

  it('gives what a pass over every webhook gives, in the same order (random creates, deletes, reused ids, restores)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.boolean(), (ops, reuse) => {
        const store = new WebhookStore(reuse ? new Behaviours(['reuse-ids']) : undefined);
        let n = 0;
        for (const o of ops) {
          if ('create' in o) store.create({ url: `https://h.example.com/${n}`, name: `w${n++}`, global: o.global, notificationType: o.create, actionType: 'triggered' }, o.owner, 'now');
          else if ('remove' in o) store.delete(o.remove);
          else store.load([...store.all()].map((w) => ({ ...w })), store.nextId);
          for (const type of TYPES) {
            for (const meta of [{}, { actionBy: 2 }]) {
              expect(subscribers(store.listing(type, ALL_NOTIFICATIONS), type, meta).map((w) => w.id)).toEqual(subscribers(store.all(), type, meta).map((w) => w.id));
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('POST /webhooks and persistence', () => {
  it('a create notes a change (the data file is saved) under every behaviour, also those that reshape the answer', async () => {
    for (const flags of [[], ['shuffle'], ['string-ids'], ['extra-fields']]) {
      let changes = 0;
      const svc = createWebhookService({ deliveryTimeoutMs: 1000, logger: silentLogger(), onChange: () => void changes++, behaviours: new Behaviours(flags) });
      const route = svc.routes.find((r) => r.method === 'POST' && r.pattern === '/webhooks')!;
      const item = { url: 'http://127.0.0.1:9/x', name: 'h', global: true, notificationType: ['modelCreated'], actionType: 'triggered' };
      const res = await route.handler({
        method: 'POST',
        path: '/webhooks',
        params: {},
        query: new URLSearchParams(),
        headers: {},
        body: { webhooks: [item] },
        rawBody: '',
        caller: { token: 't', role: 'admin', userId: 1, userName: 'admin' },
      });
      expect(res.status).toBe(200);
      expect(changes, flags.join(',') || 'default').toBe(1);
      await svc.close();
    }
  });
});
