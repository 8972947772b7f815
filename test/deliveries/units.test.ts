/**
 * Pure parts of the delivery operations: wire normalisation (count as number or string, ids as
 * numbers or strings), delivery grouping, the incremental cursor's handling of records that arrive
 * between page requests or late, and the automatic-retry scheduler's cap, backoff and rate limit.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceApi } from '../../src/api/client-types.js';
import type { WebhookHistoryQuery, WebhookHistoryRecord } from '../../src/api/types.js';
import { countOf, historyQueryString, toActions, toHistoryPage, toHistoryRecord } from '../../src/api/webhook-history.js';
import { AutoRetryScheduler } from '../../src/deliveries/auto-retry.js';
import { HistoryCursor, HistoryOrderError } from '../../src/deliveries/cursor.js';
import { DEFAULT_MAX_PAGES, readHistory, type ReadStats } from '../../src/deliveries/reader.js';
import { deliveryKey, failedDeliveries, failureCode, isDelivered } from '../../src/deliveries/records.js';
import { cell, table } from '../../src/deliveries/render.js';
import { retryDeliveries } from '../../src/deliveries/retry.js';
import { ApiError } from '../../src/errors.js';
import { registerSecrets } from '../../src/util/redact.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');

function rec(id: number, opts: { t?: number; webhook?: number; activity?: number; status?: number; code?: string } = {}): WebhookHistoryRecord {
  return toHistoryRecord({
    id,
    webhooksId: opts.webhook ?? 1,
    name: `hook${opts.webhook ?? 1}`,
    statusCode: opts.status ?? 200,
    notificationType: 'modelAccessRequested',
    webhooksActivityId: opts.activity ?? id,
    createdAt: new Date(opts.t ?? T0 + id * 1000).toISOString(),
    request: { text: 'x', metadata: {}, webhookId: opts.webhook ?? 1, webhookName: `hook${opts.webhook ?? 1}` },
    response: opts.code ? { body: { code: opts.code, connect: false } } : {},
  });
}

/** An in-memory history sorted like the interface's default (createdAt desc), with a hook between requests. */
function fakeHistory(records: WebhookHistoryRecord[], between?: (n: number) => void) {
  const requests: WebhookHistoryQuery[] = [];
  const api: Pick<ServiceApi, 'listWebhookHistory'> = {
    async listWebhookHistory(q = {}) {
      between?.(requests.length);
      requests.push(q);
      const sorted = [...records].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || Number(b.id) - Number(a.id));
      const offset = q.offset ?? 0;
      return { count: String(sorted.length) as unknown as number, records: sorted.slice(offset, offset + (q.pageSize ?? 20)) };
    },
  };
  return { api, requests };
}

describe('wire normalisation', () => {
  it('count may be a number or a string; anything else is unknown', () => {
    expect(countOf(12)).toBe(12);
    expect(countOf('12')).toBe(12);
    expect(countOf(' 7 ')).toBe(7);
    expect(countOf('many')).toBeUndefined();
    expect(countOf(undefined)).toBeUndefined();
    expect(toHistoryPage({ count: '3', records: [] }).count).toBe(3);
    expect(toHistoryPage({ count: 3, records: [] }).count).toBe(3);
  });
  it('a bare array is the records; a body without records is an error, never an empty page', () => {
    expect(toHistoryPage([{ id: 1 }]).records).toHaveLength(1);
    expect(() => toHistoryPage({ count: 1 })).toThrow(ApiError);
    expect(() => toHistoryPage('nope')).toThrow(ApiError);
    expect(() => toActions({})).toThrow(ApiError);
    expect(toActions(['a', 1, 'b'])).toEqual(['a', 'b']);
  });
  it('records: ids as strings, webhook from the record or its request, the response code lifted out', () => {
    const r = toHistoryRecord({
      id: '41',
      request: { webhookId: 7, webhookName: 'pager' },
      response: { body: { code: 'ESOCKETTIMEDOUT', connect: false } },
      statusCode: 500,
      notificationType: 'healthCheckFailed',
      webhooksActivityId: 3,
      createdAt: '2026-11-01T00:00:00Z',
    });
    expect(r).toMatchObject({ id: '41', webhookId: '7', webhookName: 'pager', responseCode: 'ESOCKETTIMEDOUT', connect: false, webhooksActivityId: '3' });
    expect(failureCode(r)).toBe('ESOCKETTIMEDOUT');
    expect(failureCode(rec(1, { status: 404 }))).toBe('HTTP 404');
    expect(isDelivered(rec(1, { status: 204 }))).toBe(true);
    expect(isDelivered(r)).toBe(false);
  });
  it('the query string carries only the given fields', () => {
    expect(historyQueryString({})).toBe('');
    expect(historyQueryString({ offset: 0, pageSize: 20, includeGlobal: true, successOrFailure: 'failure' })).toBe(
      '?offset=0&pageSize=20&includeGlobal=true&successOrFailure=failure',
    );
  });
  it('terminal cells neutralise control characters', () => {
    expect(cell('a\u001b[2Jb\nc')).toBe('a\\x1b[2Jb\\nc'); // the one escaper (src/util/terminal.ts)
    expect(cell('')).toBe('-');
    expect(cell('x'.repeat(100), 10)).toHaveLength(10);
  });
  it('terminal cells are redacted before they are cut: no part of a secret across the cut, no part of its [redacted]', () => {
    const secret = 'cell-Secret-0a9b';
    registerSecrets(secret);
    for (let max = 2; max <= 30; max++) {
      const shown = cell(`error: ${secret} rejected`, max);
      expect(shown.length).toBeLessThanOrEqual(max);
      expect(shown).not.toContain('cell-');
      expect(shown.replace('[redacted]', '')).not.toMatch(/\[|\]/);
    }
  });

  it('a table aligns names of wide characters (CJK, emoji) and combining marks by the columns they take on a terminal', async () => {
    // the old code padded by UTF-16 length: the row of `Größe-日本語-🚀` (12 units, 15 columns) pushed OWNER 3 columns right
    const out = await table([
      ['NAME', 'OWNER'],
      ['Größe-日本語-🚀', 'unmanaged'],
      ['cafe\u0301', 'unmanaged'],
      ['ok-hook', 'managed'],
    ]);
    expect(out).toBe(['NAME             OWNER', 'Größe-日本語-🚀  unmanaged', 'cafe\u0301             unmanaged', 'ok-hook          managed', ''].join('\n'));
  });
});

describe('failedDeliveries', () => {
  it('groups a delivery with its retries; replays only those whose newest record failed, oldest first, once', () => {
    const records = [
      rec(1, { activity: 1, status: 500 }),
      rec(2, { activity: 2, status: 500 }),
      rec(3, { activity: 1, status: 200 }), // retry of 1 got through
      rec(4, { activity: 2, status: 500 }), // retry of 2 failed again
      rec(5, { activity: 5, status: 500, webhook: 2 }),
      rec(6, { activity: 6, status: 200 }),
    ];
    const failed = failedDeliveries(records);
    expect(failed.map((f) => f.record.id)).toEqual(['4', '5']);
    expect(failed[0]!.failures).toBe(2);
    expect(deliveryKey(records[0]!)).toBe('1:1');
  });
});

describe('records without webhooksActivityId (a service that omits it)', () => {
  const bare = (id: number, status: number, text: string, metadata: Record<string, unknown> = { modelId: 12 }): WebhookHistoryRecord => ({
    ...rec(id, { status }),
    webhooksActivityId: '',
    request: { text, metadata, webhookId: 1, webhookName: 'hook1' },
  });

  it('group a delivery with its retries by webhook, event and payload: one retried and delivered since is not replayed', () => {
    const records = [
      bare(1, 500, 'a'),
      bare(2, 500, 'b'),
      { ...bare(3, 200, 'a'), request: { metadata: { modelId: 12 }, webhookName: 'renamed', text: 'a', webhookId: 1 } }, // the retry of 1
      bare(4, 500, 'b', { modelId: 13 }),
    ];
    // the old code: each record its own delivery, so 1 was replayed although its retry (3) got through
    expect(failedDeliveries(records).map((f) => f.record.id)).toEqual(['2', '4']);
  });

  it('without a payload either, a failure is replayed by neither retry --failed nor auto-retry (its retry could not be recognised)', () => {
    const empty = { ...rec(1, { status: 500 }), webhooksActivityId: '', request: {} };
    const ungrouped: WebhookHistoryRecord[] = [];
    expect(failedDeliveries([empty], ungrouped)).toEqual([]);
    expect(ungrouped).toEqual([empty]);
    const s = new AutoRetryScheduler({ maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 8000, perMinute: 100 }, () => T0);
    s.observe(empty, true);
    expect(s.size).toBe(0);
  });

  it('auto-retry forgets a delivery someone else retried successfully', () => {
    let now = T0;
    const s = new AutoRetryScheduler({ maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 8000, perMinute: 100 }, () => now);
    s.observe(bare(1, 500, 'a'), true);
    s.observe(bare(2, 200, 'a'), true); // a manual retry of 1 got through
    now += 60_000;
    expect(s.take()).toEqual([]); // the old code retried 1 again
  });
});

describe('readHistory', () => {
  it('is lazy: a limit within one page is one request', async () => {
    const { api, requests } = fakeHistory(Array.from({ length: 500 }, (_, i) => rec(i + 1)));
    const out: string[] = [];
    for await (const r of readHistory(api, { pageSize: 20, limit: 20 })) out.push(r.id);
    expect(out).toHaveLength(20);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ offset: 0, pageSize: 20, sortField: 'createdAt', sortOrder: 'desc' });
  });
  it('a service that does not page (every request answers its whole history, no count) is read in two requests, and says so', async () => {
    const records = [rec(3), rec(2), rec(1)];
    let n = 0;
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory() {
        n++;
        return { records };
      },
    };
    const stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false };
    const out: string[] = [];
    for await (const r of readHistory(api, { pageSize: 100 }, stats)) out.push(r.id);
    expect(out).toEqual(['3', '2', '1']);
    expect(n).toBe(2);
    expect(stats).toMatchObject({ requests: 2, unpaged: true, truncated: false });
    // a client-side filter matching nothing does not keep it reading either
    n = 0;
    for await (const _ of readHistory(api, { match: () => false })) void _;
    expect(n).toBe(2);
  });

  it('a page worth of deliveries arriving between two requests is a shift, not a service that does not page: the rest is read', async () => {
    const records = Array.from({ length: 30 }, (_, i) => rec(i + 1));
    const { api } = fakeHistory(records, (n) => {
      // before the second request: 10 new deliveries at the top (the second page is then the first again)
      if (n === 1) for (let k = 1; k <= 10; k++) records.push(rec(100 + k));
    });
    const stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false };
    const out: string[] = [];
    for await (const r of readHistory(api, { pageSize: 10 }, stats)) out.push(r.id);
    expect(stats.unpaged).toBeUndefined();
    expect(stats.exhausted).toBe(true);
    expect(new Set(out).size).toBe(out.length);
    expect(out.filter((id) => Number(id) <= 30).sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: 30 }, (_, i) => String(i + 1)));
  });
  it('a history that never ends (pages never empty, records without a date) is read at most DEFAULT_MAX_PAGES pages, and says so', async () => {
    let n = 0;
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory() {
        n++;
        return { records: [{ ...rec(n), createdAt: '' }] };
      },
    };
    const stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false };
    let read = 0;
    for await (const _ of readHistory(api, { pageSize: 1, sinceMs: T0 - 86_400_000 }, stats)) read++;
    expect(n).toBe(DEFAULT_MAX_PAGES);
    expect(read).toBe(0); // undated: --since cannot place them
    expect(stats.undated).toBe(DEFAULT_MAX_PAGES);
    expect(stats).toMatchObject({ truncated: true, exhausted: false, requests: DEFAULT_MAX_PAGES });
  });

  it('with a since, records without a date (a service that omits createdAt) are left out and counted, not taken as recent', async () => {
    const records = [rec(3, { t: T0, status: 500 }), { ...rec(2, { status: 500 }), createdAt: '' }, { ...rec(1, { status: 500 }), createdAt: '' }];
    const { api } = fakeHistory(records);
    const stats: ReadStats = { requests: 0, received: 0, exhausted: false, truncated: false };
    const out: string[] = [];
    for await (const r of readHistory(api, { sinceMs: T0 - 86_400_000 }, stats)) out.push(r.id);
    expect(out).toEqual(['3']);
    expect(stats.undated).toBe(2);
    // without a since they are records like any other
    const all: string[] = [];
    for await (const r of readHistory(api, {})) all.push(r.id);
    expect(all.sort()).toEqual(['1', '2', '3']);
  });

  it('records without an id that a shift between pages brings twice are yielded once (by their key)', async () => {
    const idless = (n: number) => ({ ...rec(n, { t: T0 + n * 1000 }), id: '' });
    const records = Array.from({ length: 10 }, (_, i) => idless(i + 1));
    const { api } = fakeHistory(records, (n) => {
      if (n === 1) records.push(idless(100), idless(101)); // two new ones arrive before page 2
    });
    const out: string[] = [];
    for await (const r of readHistory(api, { pageSize: 5 })) out.push(r.createdAt);
    expect(out).toHaveLength(10);
    expect(new Set(out).size).toBe(10);
  });

  it('falls back to filtering by status code when the service refuses successOrFailure', async () => {
    const records = [rec(1, { status: 500 }), rec(2), rec(3, { status: 500 })];
    const inner = fakeHistory(records);
    let refused = 0;
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory(q = {}) {
        if (q.successOrFailure) {
          refused++;
          throw new ApiError(400, 'Bad Request', 'successOrFailure must be one of ...', 'GET', '/webhooks/history');
        }
        return inner.api.listWebhookHistory(q);
      },
    };
    let noted = 0;
    const out: string[] = [];
    for await (const r of readHistory(api, { filters: { successOrFailure: 'failure' }, onFilterFallback: () => noted++ })) out.push(r.id);
    expect(out).toEqual(['3', '1']);
    expect([refused, noted]).toEqual([1, 1]);
  });
});

describe('HistoryCursor (incremental polling)', () => {
  it('first poll reads recent history only; later polls return only records not seen', async () => {
    const records = Array.from({ length: 1000 }, (_, i) => rec(i + 1, { t: T0 - 3_600_000 + i * 1000 })); // an hour ago
    const { api, requests } = fakeHistory(records);
    const cursor = new HistoryCursor({ pageSize: 100, overlapMs: 60_000 });
    const first = await cursor.poll(api);
    expect(first.baseline).toBe(true);
    expect(first.records).toHaveLength(61); // the newest and those within 60 s of it
    expect(first.requests).toBe(1);

    const idle = await cursor.poll(api);
    expect(idle).toMatchObject({ baseline: false, requests: 1, truncated: false });
    expect(idle.records).toEqual([]);

    for (let i = 0; i < 150; i++) records.push(rec(2000 + i, { t: T0 + i }));
    requests.length = 0;
    const next = await cursor.poll(api);
    expect(next.records.map((r) => r.id)).toEqual(Array.from({ length: 150 }, (_, i) => String(2149 - i)));
    // the 150 new ones, then the previous poll's overlap window (61 records) is read again and dropped
    expect(requests.map((q) => q.offset)).toEqual([0, 100, 200]);
  });

  it.each([
    ['epoch milliseconds (a Java service: Jackson writes dates so by default)', (t: number) => t],
    ['epoch seconds (PHP time())', (t: number) => t / 1000],
    ['epoch milliseconds as a string', (t: number) => String(t)],
  ])('createdAt as %s: read as that time (the window, the boundary, the ISO time shown)', async (_name, wire) => {
    const records = Array.from({ length: 300 }, (_, i) => {
      const r = rec(i + 1, { t: T0 - 3_600_000 + i * 1000 });
      return toHistoryRecord({ ...r, webhooksId: r.webhookId, createdAt: wire(Date.parse(r.createdAt)) });
    });
    expect(records[0]!.createdAt).toBe(new Date(T0 - 3_600_000).toISOString());
    const { api, requests } = fakeHistory(records);
    const cursor = new HistoryCursor({ pageSize: 100, overlapMs: 60_000 });
    expect((await cursor.poll(api)).records).toHaveLength(61);
    requests.length = 0;
    expect((await cursor.poll(api)).records).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('records arriving between page requests shift pages: repeats are dropped, nothing is skipped', async () => {
    const records = Array.from({ length: 50 }, (_, i) => rec(i + 1, { t: T0 + i * 10 }));
    let arriving = false;
    const { api } = fakeHistory(records, (n) => {
      // before every page request: 7 new records at the top
      if (arriving) for (let k = 0; k < 7; k++) records.push(rec(1000 + n * 10 + k, { t: T0 + 100_000 + n * 100 + k }));
    });
    const cursor = new HistoryCursor({ pageSize: 10, overlapMs: 5_000 });
    await cursor.poll(api);
    arriving = true;
    const got: string[] = [];
    for (let i = 0; i < 3; i++) got.push(...(await cursor.poll(api)).records.map((r) => r.id));
    arriving = false;
    got.push(...(await cursor.poll(api)).records.map((r) => r.id));
    const news = records.filter((r) => Number(r.id) >= 1000).map((r) => r.id);
    expect(news.length).toBeGreaterThan(20);
    expect(new Set(got).size).toBe(got.length); // no repeats
    expect([...got].sort()).toEqual([...news].sort()); // none skipped
  });

  it('a page worth of deliveries arriving between two page requests of a poll: the poll reads on, nothing waits for the next', async () => {
    const records = Array.from({ length: 5 }, (_, i) => rec(i + 1, { t: T0 + i * 10 }));
    let burst = -1;
    const { api } = fakeHistory(records, (n) => {
      if (n === burst) for (let k = 1; k <= 10; k++) records.push(rec(2000 + k, { t: T0 + 200_000 + k }));
    });
    const cursor = new HistoryCursor({ pageSize: 10, overlapMs: 5_000 });
    await cursor.poll(api);
    for (let k = 1; k <= 25; k++) records.push(rec(1000 + k, { t: T0 + 100_000 + k }));
    burst = 2; // the second request of the next poll (the first poll made one)
    const got = (await cursor.poll(api)).records.map((r) => r.id);
    expect(new Set(got).size).toBe(got.length);
    // every delivery before the burst in this poll (before: the read stopped at the repeated page, the 15 older waited)
    expect([...got].sort()).toEqual(records.filter((r) => Number(r.id) >= 1000 && Number(r.id) < 2000).map((r) => r.id).sort());
    // the burst, newer than this poll's first page, is the next poll's news
    expect((await cursor.poll(api)).records.map((r) => r.id).sort()).toEqual(records.filter((r) => Number(r.id) >= 2000).map((r) => r.id).sort());
  });

  it('a record listed late (created before newer ones) is found when within the overlap', async () => {
    const times = [1, 2, 3, 4, 5, 6].map((i) => T0 + i * 1000);
    const late = () => rec(99, { t: T0 + 4500 }); // created between 4 and 5, listed after 6
    const run = async (overlapMs: number) => {
      const records = times.map((t, i) => rec(i + 1, { t }));
      const { api } = fakeHistory(records);
      const cursor = new HistoryCursor({ pageSize: 2, overlapMs });
      await cursor.poll(api);
      records.push(late(), rec(7, { t: T0 + 7000 }));
      return (await cursor.poll(api)).records.map((r) => r.id).sort();
    };
    expect(await run(2000)).toEqual(['7', '99']);
    // without the overlap the boundary is record 5, read before: a record listed below it is not looked for
    expect(await run(0)).toEqual(['7']);
  });

  it('a record dated in the future does not hide the records that follow it', async () => {
    const records = [rec(1, { t: T0 }), rec(2, { t: T0 + 1000 })];
    const { api, requests } = fakeHistory(records);
    const cursor = new HistoryCursor({ pageSize: 10, overlapMs: 5_000 });
    await cursor.poll(api);
    records.push(rec(3, { t: T0 + 86_400_000 })); // a clock a day ahead
    expect((await cursor.poll(api)).records.map((r) => r.id)).toEqual(['3']);
    records.push(rec(4, { t: T0 + 2000 }), rec(5, { t: T0 + 3000 }));
    expect((await cursor.poll(api)).records.map((r) => r.id)).toEqual(['5', '4']);
    requests.length = 0;
    expect((await cursor.poll(api)).records).toEqual([]);
    expect(requests).toHaveLength(1);
  });

  it('refuses a history that is not newest first', async () => {
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      listWebhookHistory: async () => ({ records: [rec(1, { t: T0 }), rec(2, { t: T0 + 1000 })] }),
    };
    await expect(new HistoryCursor().poll(api)).rejects.toBeInstanceOf(HistoryOrderError);
  });

  it('a service that does not page: a poll stops at the first page holding only records already read, and says so', async () => {
    const records = [rec(3, { t: T0 + 3000 }), rec(2, { t: T0 + 2000 }), rec(1, { t: T0 + 1000 })];
    let n = 0;
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory() {
        n++;
        return { records: [...records] };
      },
    };
    const cursor = new HistoryCursor({ pageSize: 100, overlapMs: 60_000 });
    const first = await cursor.poll(api);
    expect(first).toMatchObject({ requests: 2, unpaged: true, truncated: false });
    expect(first.records.map((r) => r.id)).toEqual(['3', '2', '1']);
    records.unshift(rec(4, { t: T0 + 4000 }));
    n = 0;
    const next = await cursor.poll(api);
    expect(next.records.map((r) => r.id)).toEqual(['4']);
    expect(n).toBe(2);
  });

  it('records without a date (a service that omits createdAt) are each counted once, and not remembered forever', async () => {
    const undated = (id: number) => ({ ...rec(id), createdAt: '' });
    const records: WebhookHistoryRecord[] = Array.from({ length: 20 }, (_, i) => undated(i + 1));
    // newest first: the highest id first (the service's order; no dates to sort by)
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory(q = {}) {
        const sorted = [...records].sort((a, b) => Number(b.id) - Number(a.id));
        const offset = q.offset ?? 0;
        return { count: sorted.length, records: sorted.slice(offset, offset + (q.pageSize ?? 20)) };
      },
    };
    const cursor = new HistoryCursor({ pageSize: 10, overlapMs: 60_000, maxPages: 3 });
    await cursor.poll(api);
    const got: string[] = [];
    let next = 21;
    for (let poll = 0; poll < 50; poll++) {
      for (let k = 0; k < 5; k++) records.push(undated(next++));
      got.push(...(await cursor.poll(api)).records.map((r) => r.id));
    }
    expect(got).toHaveLength(250);
    expect(new Set(got).size).toBe(250); // each new record once
    // what one poll reads (3 pages of 10), not every record ever seen (270)
    expect(cursor.remembered).toBeLessThanOrEqual(30);
  });

  it('a poll that fails on a later page loses nothing: the next poll returns the records of its first pages too', async () => {
    const records = Array.from({ length: 5 }, (_, i) => rec(i + 1, { t: T0 + i * 1000 }));
    const inner = fakeHistory(records);
    let failNext = false;
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory(q = {}) {
        if (failNext && (q.offset ?? 0) > 0) {
          failNext = false;
          throw new ApiError(503, 'Service Unavailable', 'try later', 'GET', '/webhooks/history');
        }
        return inner.api.listWebhookHistory(q);
      },
    };
    const cursor = new HistoryCursor({ pageSize: 10, overlapMs: 0 });
    await cursor.poll(api);
    for (let i = 0; i < 15; i++) records.push(rec(100 + i, { t: T0 + 100_000 + i * 1000, status: 500 }));
    failNext = true;
    await expect(cursor.poll(api)).rejects.toBeInstanceOf(ApiError); // page 1 read, page 2 failed
    const next = await cursor.poll(api);
    expect(next.records.map((r) => r.id).sort()).toEqual(Array.from({ length: 15 }, (_, i) => String(100 + i)).sort());
  });

  it('records without a date that a shift between pages brings twice in one poll are returned once', async () => {
    const undated = (id: number) => ({ ...rec(id), createdAt: '' });
    const records: WebhookHistoryRecord[] = [undated(1)];
    let arriving = 0;
    const api: Pick<ServiceApi, 'listWebhookHistory'> = {
      async listWebhookHistory(q = {}) {
        for (; arriving > 0; arriving--) records.push(undated(1000 + records.length)); // arrive before each page
        const sorted = [...records].sort((a, b) => Number(b.id) - Number(a.id));
        const offset = q.offset ?? 0;
        return { count: sorted.length, records: sorted.slice(offset, offset + (q.pageSize ?? 20)) };
      },
    };
    const cursor = new HistoryCursor({ pageSize: 5, overlapMs: 60_000 });
    await cursor.poll(api);
    for (let i = 0; i < 8; i++) records.push(undated(100 + i));
    const inner = api.listWebhookHistory.bind(api);
    let n = 0;
    api.listWebhookHistory = async (q) => {
      if (n++ === 1) arriving = 3; // three more arrive before the second page: page 2 repeats three of page 1
      return inner(q);
    };
    const got = (await cursor.poll(api)).records.map((r) => r.id);
    expect(new Set(got).size).toBe(got.length);
  });

  it('stops after maxPages and says so', async () => {
    const records = Array.from({ length: 100 }, (_, i) => rec(i + 1, { t: T0 + i }));
    const { api } = fakeHistory(records);
    const cursor = new HistoryCursor({ pageSize: 10, overlapMs: 1_000_000, maxPages: 3 });
    const r = await cursor.poll(api);
    expect(r).toMatchObject({ requests: 3, truncated: true });
    expect(r.records).toHaveLength(30);
  });
});

describe('AutoRetryScheduler', () => {
  const policy = { maxAttempts: 3, backoffMs: 1000, maxBackoffMs: 8000, perMinute: 100 };

  it('does not track a failed record without a history id: it cannot be retried', () => {
    let now = T0;
    const s = new AutoRetryScheduler(policy, () => now);
    s.observe({ ...rec(1, { status: 500 }), id: '' }, true);
    now += 60_000;
    expect(s.take()).toEqual([]);
    expect(s.size).toBe(0);
  });

  it('retries a failed delivery of a managed webhook after backoff, doubling, up to the cap', () => {
    let now = T0;
    const s = new AutoRetryScheduler(policy, () => now);
    s.observe(rec(1, { status: 500 }), true);
    s.observe(rec(2, { status: 500, webhook: 9 }), false); // not managed: never retried
    expect(s.take()).toEqual([]);
    now += 1000;
    const [p] = s.take();
    expect(p!.record.id).toBe('1');
    let v = s.settle(p!, { kind: 'record', record: rec(10, { status: 500, activity: 1 }) });
    expect(v).toMatchObject({ delivered: false, exhausted: false, attempt: 1, nextAt: now + 2000 });
    now += 1999;
    expect(s.take()).toEqual([]);
    now += 1;
    const [p2] = s.take();
    expect(p2!.record.id).toBe('10'); // the newest failure of the delivery
    v = s.settle(p2!, { kind: 'error' });
    expect(v.nextAt).toBe(now + 4000);
    now += 4000;
    const [p3] = s.take();
    v = s.settle(p3!, { kind: 'record', record: rec(11, { status: 500, activity: 1 }) });
    expect(v).toMatchObject({ exhausted: true, attempt: 3 });
    now += 100_000;
    expect(s.take()).toEqual([]);
    s.observe(rec(12, { status: 500, activity: 1 }), true); // e.g. a manual retry failing: still given up
    expect(s.size).toBe(0);
    expect(s.exhausted).toBe(1);
  });

  it('our own result records are not news; a success anywhere resolves the delivery', () => {
    let now = T0;
    const s = new AutoRetryScheduler(policy, () => now);
    s.observe(rec(1, { status: 500 }), true);
    now += 1000;
    const [p] = s.take();
    s.settle(p!, { kind: 'record', record: rec(5, { status: 500, activity: 1 }) });
    s.observe(rec(5, { status: 500, activity: 1 }), true); // the poller reads our result later
    expect(s.size).toBe(1);
    s.observe(rec(6, { status: 200, activity: 1 }), true); // someone retried it successfully
    expect(s.size).toBe(0);
  });

  it('a failing webhook is probed with one delivery per round; a gone record is dropped', () => {
    let now = T0;
    const s = new AutoRetryScheduler(policy, () => now);
    for (let i = 1; i <= 5; i++) s.observe(rec(i, { status: 500 }), true);
    s.observe(rec(9, { status: 500, webhook: 2 }), true);
    now += 1000;
    const first = s.take();
    expect(first).toHaveLength(6); // healthy so far: all due ones go
    for (const p of first.slice(0, 5)) s.settle(p, { kind: 'record', record: rec(100 + Number(p.record.id), { status: 500, activity: Number(p.record.id) }) });
    s.settle(first[5]!, { kind: 'gone' });
    now += 2000;
    const round = s.take();
    expect(round).toHaveLength(1); // webhook 1 failed: one probe only
    s.settle(round[0]!, { kind: 'record', record: rec(200, { status: 200, activity: Number(round[0]!.record.webhooksActivityId) }) });
    const after = s.take();
    expect(after).toHaveLength(4); // the probe got through: the rest may go
  });

  it("keeps at most 10,000 webhooks' backoff gates (a webhook deleted while failing never clears its own)", () => {
    let now = T0;
    const s = new AutoRetryScheduler({ ...policy, perMinute: 1e9 }, () => now);
    for (const [from, to] of [
      [1, 6000],
      [6001, 12_000],
    ]) {
      for (let w = from!; w <= to!; w++) s.observe(rec(w, { status: 500, webhook: w, activity: w }), true);
      now += 1000;
      const taken = s.take().filter((p) => Number(p.webhookId) >= from!);
      expect(taken).toHaveLength(6000);
      for (const p of taken) s.settle(p, { kind: 'record', record: rec(100_000 + Number(p.record.id), { status: 500, webhook: Number(p.webhookId), activity: Number(p.record.id) }) });
    }
    expect(s.gatedWebhooks).toBe(10_000);
  });

  it('never exceeds the rate limit in any minute', () => {
    let now = T0;
    const s = new AutoRetryScheduler({ ...policy, perMinute: 3 }, () => now);
    for (let i = 1; i <= 10; i++) s.observe(rec(i, { status: 500, webhook: i }), true);
    now += 1000;
    const a = s.take();
    expect(a).toHaveLength(3);
    for (const p of a) s.settle(p, { kind: 'gone' });
    now += 30_000;
    expect(s.take()).toHaveLength(0);
    now += 30_000;
    expect(s.take()).toHaveLength(3);
  });
});

describe('retryDeliveries', () => {
  it('retries one history id once however it is written (41, 041, 0041): a retry is a new delivery', async () => {
    const calls: string[] = [];
    const api = {
      async retryWebhookDelivery(id: string) {
        calls.push(id);
        return rec(Number(id) + 100);
      },
    };
    const outcomes = await retryDeliveries(api, ['41', '041', '7', '0041', '07'], { concurrency: 1 });
    expect(calls).toEqual(['41', '7']);
    expect(outcomes.map((o) => o.historyId)).toEqual(['41', '7']);
  });
});
