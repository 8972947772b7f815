/**
 * `govops webhooks history|retry|events|list` as a user runs them (the built CLI, a real process)
 * against the sandbox with a real local receiver: paging and every filter (checked in the sandbox's
 * request log), a delivery that times out and its retry once the receiver recovered, `--failed`
 * selection with `--max`, event names against the shipped schemas, and who manages each webhook.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runGovops } from '../helpers/cli.js';
import { mapJsonBody, rewritingProxy } from '../helpers/rewriting-proxy.js';
import { hookItem, startWorld, type World } from './world.js';

let w: World;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'govops-wh-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await w?.close();
});

function govops(args: string[], token?: string) {
  return runGovops(args, { cwd: dir, env: { GOVOPS_URL: w.url, GOVOPS_TOKEN: token ?? w.admin, GOVOPS_LOG_LEVEL: undefined } });
}

async function jsonOf(args: string[]): Promise<any> {
  const r = await govops([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`govops ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const STATE_KEY = 'a'.repeat(64);

async function stateFile(name: string, resources: Array<{ name: string; id: string; origin?: string }>): Promise<string> {
  const file = join(dir, name);
  const now = new Date().toISOString();
  await writeFile(
    file,
    JSON.stringify({
      version: 1,
      fingerprintKey: STATE_KEY,
      resources: resources.map((r) => ({ kind: 'Webhook', name: r.name, id: r.id, origin: r.origin ?? 'created', specHash: 'x', secretFingerprints: {}, updatedAt: now })),
    }),
  );
  return file;
}

describe('govops webhooks history', () => {
  it('pages lazily and applies every filter (server-side where the interface has one)', async () => {
    w = await startWorld();
    const [a, b] = await w.createHooks([
      hookItem(w, 'alpha', '/a'),
      hookItem(w, 'beta', '/b', { global: true, notificationType: ['ALL_NOTIFICATIONS'] }),
    ]);
    w.rx.set('/b', 500);
    for (let i = 0; i < 3; i++) await w.fire('modelAccessRequested');
    for (let i = 0; i < 2; i++) await w.fire('userCreated');
    // 250 old deliveries of alpha, two days ago
    await w.seed({ webhookId: a.id, count: 250, from: new Date(Date.now() - 2 * 86_400_000).toISOString(), stepMs: 1000 });
    await w.clearRequests();

    const all = await jsonOf(['webhooks', 'history']);
    expect(all.count).toBe(258);
    expect(all.records).toHaveLength(20);
    expect(all.records.slice(0, 8).map((r: any) => r.webhookName).sort()).toEqual(['alpha', 'alpha', 'alpha', 'beta', 'beta', 'beta', 'beta', 'beta']);
    let reqs = await w.historyRequests();
    expect(reqs).toHaveLength(1); // --limit 20 (default): one request
    expect(reqs[0]!.query).toEqual({ offset: '0', pageSize: '20', sortField: 'createdAt', sortOrder: 'desc', includeGlobal: 'true', includeUser: 'true' });

    await w.clearRequests();
    const three = await jsonOf(['webhooks', 'history', '--limit', '3']);
    expect(three.records).toHaveLength(3);
    reqs = await w.historyRequests();
    expect(reqs.map((r) => r.query.pageSize)).toEqual(['3']);

    await w.clearRequests();
    const failed = await jsonOf(['webhooks', 'history', '--failed']);
    expect(failed.records).toHaveLength(5);
    expect(failed.records.every((r: any) => r.webhookName === 'beta' && r.statusCode === 500)).toBe(true);
    expect((await w.historyRequests())[0]!.query.successOrFailure).toBe('failure');

    const ok = await jsonOf(['webhooks', 'history', '--succeeded', '--since', '1h']);
    expect(ok.records.map((r: any) => r.webhookName)).toEqual(['alpha', 'alpha', 'alpha']);

    await w.clearRequests();
    const created = await jsonOf(['webhooks', 'history', '--type', 'userCreated']);
    expect(created.records.map((r: any) => r.notificationType)).toEqual(['userCreated', 'userCreated']);
    expect((await w.historyRequests())[0]!.query.notificationType).toBe('userCreated');
    // every record the filters select was shown: no "shows more" (the service's count says there are no more)
    const createdText = await govops(['webhooks', 'history', '--type', 'userCreated', '--limit', '2']);
    expect(createdText.stderr).toMatch(/^2 of 2 records, newest first$/m);

    const noGlobal = await jsonOf(['webhooks', 'history', '--no-global', '--since', '1h']);
    expect(new Set(noGlobal.records.map((r: any) => r.webhookName))).toEqual(new Set(['alpha']));
    const noPersonal = await jsonOf(['webhooks', 'history', '--no-personal']);
    expect(noPersonal.records.map((r: any) => r.webhookId)).toEqual(Array(5).fill(String(b.id)));

    // since: a duration or an ISO time; older records stop the paging
    const lastHour = await jsonOf(['webhooks', 'history', '--since', '1h', '--limit', '500']);
    expect(lastHour.records).toHaveLength(8);
    // the service's count is of every record, of any age: not the count of those since (258 here, not 8)
    expect(lastHour.count).toBeUndefined();
    const lastHourText = await govops(['webhooks', 'history', '--since', '1h', '--limit', '3']);
    expect(lastHourText.stderr).toMatch(/^3 records, newest first; --limit 15 shows more$/m);
    expect((await jsonOf(['webhooks', 'history', '--since', '3d', '--limit', '500'])).records).toHaveLength(258);
    const iso = new Date(Date.now() - 3_600_000).toISOString();
    expect((await jsonOf(['webhooks', 'history', '--since', iso, '--limit', '500'])).records).toHaveLength(8);

    // NAME: filtered here (the interface has no webhook filter), pages of 100 until enough
    await w.clearRequests();
    const alpha = await jsonOf(['webhooks', 'history', 'alpha', '--limit', '120']);
    expect(alpha.records).toHaveLength(120);
    expect(alpha.records.every((r: any) => r.webhookName === 'alpha')).toBe(true);
    expect((await w.historyRequests()).map((r) => [r.query.offset, r.query.pageSize])).toEqual([
      ['0', '100'],
      ['100', '100'],
    ]);
    expect(alpha.count).toBeUndefined(); // the service's count is not the count of one webhook

    const text = await govops(['webhooks', 'history', 'beta', '--limit', '2']);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toMatch(/^TIME\s+ID\s+WEBHOOK\s+EVENT\s+STATUS\s+CODE$/);
    expect(text.stdout).toMatch(/beta\s+userCreated\s+500/);

    const bad = await govops(['webhooks', 'history', '--since', 'yesterday']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--since');
  });

  it('shows a delivery that timed out (ESOCKETTIMEDOUT) and retries it once the receiver recovered', async () => {
    w = await startWorld({ deliveryTimeoutMs: 300 });
    await w.createHooks([hookItem(w, 'pager', '/t')]);
    w.rx.set('/t', 'hang');
    await w.fire('modelAccessRequested');

    const failed = await jsonOf(['webhooks', 'history', 'pager', '--failed']);
    expect(failed.records).toHaveLength(1);
    const rec = failed.records[0];
    expect(rec).toMatchObject({ statusCode: 500, responseCode: 'ESOCKETTIMEDOUT', response: { body: { code: 'ESOCKETTIMEDOUT' } } });
    const table = await govops(['webhooks', 'history', 'pager']);
    expect(table.stdout).toMatch(new RegExp(`\\s${rec.id}\\s+pager\\s+modelAccessRequested\\s+500\\s+ESOCKETTIMEDOUT`));

    // still down: the retry fails again, exit 1
    const again = await govops(['webhooks', 'retry', rec.id]);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/failed.*ESOCKETTIMEDOUT/);

    w.rx.set('/t', 'ok');
    const hitsBefore = w.rx.hits.get('/t') ?? 0;
    const retried = await govops(['webhooks', 'retry', rec.id, '-o', 'json']);
    expect(retried.code).toBe(0);
    const out = JSON.parse(retried.stdout);
    expect(out).toMatchObject({ retried: 1, delivered: 1, failed: 0 });
    expect(out.results[0]).toMatchObject({ historyId: rec.id, ok: true, record: { statusCode: 200, webhookName: 'pager' } });
    expect(w.rx.hits.get('/t')).toBe(hitsBefore + 1);
    const newest = await jsonOf(['webhooks', 'history', 'pager', '--limit', '1']);
    expect(newest.records[0]).toMatchObject({ id: out.results[0].record.id, statusCode: 200 });
  });
});

describe('a service that lists its history oldest first (it ignores sortOrder=desc)', () => {
  it('history and retry --failed refuse it (exit 1) instead of showing old records as the newest or finding nothing to retry', async () => {
    w = await startWorld();
    const [f] = await w.createHooks([hookItem(w, 'flaky', '/f')]);
    w.rx.set('/f', 503);
    await w.seed({ webhookId: f.id, count: 5, statusCode: 503, from: new Date(Date.now() - 2 * 86_400_000).toISOString(), stepMs: 1000 });
    for (let i = 0; i < 2; i++) await w.fire('modelAccessRequested');
    const proxy = await rewritingProxy(
      w.url,
      (_q, res) => res,
      (method, url) => (method === 'GET' && url.startsWith('/webhooks/history') ? url.replace('sortOrder=desc', 'sortOrder=asc') : url),
    );
    const run = (args: string[]) => runGovops(args, { cwd: dir, env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined } });
    try {
      const retry = await run(['webhooks', 'retry', '--failed', 'flaky', '--dry-run']);
      expect(retry.code, retry.stdout).toBe(1);
      expect(retry.stderr).toContain('not sorted newest first');
      const history = await run(['webhooks', 'history', '--limit', '3']);
      expect(history.code, history.stdout).toBe(1);
      expect(history.stderr).toContain('not sorted newest first');
    } finally {
      await proxy.close();
    }
  });
});

describe('a service whose history records carry no createdAt', () => {
  it('retry --failed --since does not replay them (they may be of any age) and says it left them out', async () => {
    w = await startWorld();
    const [f] = await w.createHooks([hookItem(w, 'flaky', '/f')]);
    w.rx.set('/f', 503);
    await w.seed({ webhookId: f.id, count: 3, statusCode: 503, from: new Date(Date.now() - 300 * 86_400_000).toISOString(), stepMs: 1000 });
    const isHistory = (url: string): boolean => url.startsWith('/webhooks/history?');
    const proxy = await rewritingProxy(w.url, (q, res) =>
      isHistory(q.url) && res.status === 200
        ? mapJsonBody(res, (v) => {
            const page = v as { records: Array<Record<string, unknown>> };
            for (const r of page.records) delete r.createdAt;
            return page;
          })
        : res,
    );
    try {
      const retry = await runGovops(['webhooks', 'retry', '--failed', 'flaky', '--since', '24h', '-o', 'json'], {
        cwd: dir,
        env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined },
      });
      expect(retry.code, retry.stderr).toBe(0);
      expect(JSON.parse(retry.stdout)).toMatchObject({ retried: 0 });
      expect(retry.stderr).toContain('note: 3 records without a date (no createdAt) left out: --since cannot place them');
      expect(w.rx.hits.get('/f') ?? 0).toBe(0); // the 300-day-old deliveries were not sent again
    } finally {
      await proxy.close();
    }
  });
});

describe('a service whose history records carry no id', () => {
  it('retry --failed sends no retry without an id (POST /webhooks/history/retry/ names no record) and says so', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'flaky', '/f')]);
    w.rx.set('/f', 503);
    await w.fire('modelAccessRequested');
    await w.fire('userCreated');
    const isHistory = (url: string): boolean => url.startsWith('/webhooks/history?');
    const proxy = await rewritingProxy(w.url, (q, res) =>
      isHistory(q.url) && res.status === 200
        ? mapJsonBody(res, (v) => {
            const page = v as { records: Array<Record<string, unknown>> };
            for (const r of page.records) delete r.id;
            return page;
          })
        : res,
    );
    try {
      const retry = await runGovops(['webhooks', 'retry', '--failed', 'flaky', '-o', 'json'], {
        cwd: dir,
        env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined },
      });
      expect(retry.code, retry.stderr).toBe(0);
      expect(JSON.parse(retry.stdout)).toMatchObject({ retried: 0 });
      expect(retry.stderr).toContain('note: 1 failed delivery record without a history id (the service sent none) cannot be retried');
      expect(proxy.requests.filter((r) => r.startsWith('POST'))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe('a service whose history records carry no webhooksActivityId (sandbox behaviour no-activity-id)', () => {
  it('retry --failed does not replay a delivery whose retry got through (grouped by webhook, event and payload)', async () => {
    w = await startWorld();
    w.sb.setBehaviours(['no-activity-id']);
    await w.createHooks([hookItem(w, 'flaky', '/f', { notificationType: ['modelAccessRequested', 'modelAccessApproved'] })]);
    w.rx.set('/f', 503);
    await w.fire('modelAccessRequested');
    const [first] = (await jsonOf(['webhooks', 'history'])).records;
    expect((await w.call('GET', '/webhooks/history')).records[0]).not.toHaveProperty('webhooksActivityId');
    w.rx.set('/f', 'ok');
    const manual = await jsonOf(['webhooks', 'retry', first.id]);
    expect(manual).toMatchObject({ retried: 1, delivered: 1 });
    w.rx.set('/f', 503);
    await w.fire('modelAccessApproved');
    const history = (await jsonOf(['webhooks', 'history'])).records;
    expect(history).toHaveLength(3);
    const approved = history.find((r: any) => r.notificationType === 'modelAccessApproved');
    // the old code: the first failure too (each record its own delivery), a second delivery of what got through
    const dry = await jsonOf(['webhooks', 'retry', '--failed', 'flaky', '--dry-run']);
    expect(dry.ids).toEqual([approved.id]);
  });
});

describe('a service whose history does not page (every request answers the whole history as a bare array, no count)', () => {
  it('history and retry --failed read it in two requests (not 1,000) and say the read stopped', async () => {
    w = await startWorld();
    const [f] = await w.createHooks([hookItem(w, 'flaky', '/f')]);
    w.rx.set('/f', 503);
    for (let i = 0; i < 3; i++) await w.fire('modelAccessRequested');
    const isHistory = (url: string): boolean => url.startsWith('/webhooks/history?') || url === '/webhooks/history';
    const proxy = await rewritingProxy(
      w.url,
      (q, res) => (isHistory(q.url) && res.status === 200 ? mapJsonBody(res, (v) => (v as { records: unknown[] }).records) : res),
      (method, url) => (method === 'GET' && isHistory(url) ? '/webhooks/history?includeGlobal=true&pageSize=1000' : url),
    );
    const run = (args: string[]) => runGovops(args, { cwd: dir, env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined } });
    const historyRequests = () => proxy.requests.filter((l) => l.startsWith('GET /webhooks/history')).length;
    try {
      const history = await run(['webhooks', 'history', '--limit', '50']);
      expect(history.code, history.stderr).toBe(0);
      expect(history.stdout.trim().split('\n')).toHaveLength(4); // the header and the 3 records
      expect(historyRequests()).toBe(2);
      expect(history.stderr).toMatch(/note: the read stopped after 2 pages \(6 records\): page 2 held only records already read, so the service does not page its history/);
      // -o json says so too (on stderr, stdout stays the JSON): a job reading the JSON is told the read is incomplete
      const json = await run(['webhooks', 'history', '--limit', '50', '-o', 'json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout).records).toHaveLength(3);
      expect(json.stderr).toMatch(/note: the read stopped after 2 pages \(6 records\): page 2 held only records already read/);
      proxy.requests.length = 0;
      const retry = await run(['webhooks', 'retry', '--failed', 'flaky', '--dry-run', '-o', 'json']);
      expect(retry.code, retry.stderr).toBe(0);
      expect(JSON.parse(retry.stdout).records.every((r: { webhookId: string }) => r.webhookId === String(f.id))).toBe(true);
      expect(historyRequests()).toBe(2);
      expect(retry.stderr).toContain('so the service does not page its history');
    } finally {
      await proxy.close();
    }
  });
});

describe('govops webhooks retry', () => {
  it('--failed selects each failed delivery once (oldest first, not those retried since), bounded by --max', async () => {
    w = await startWorld();
    const [f, g] = await w.createHooks([hookItem(w, 'flaky', '/f'), hookItem(w, 'other', '/g')]);
    w.rx.set('/f', 503);
    w.rx.set('/g', 503);
    for (let i = 0; i < 5; i++) await w.fire('modelAccessRequested');
    w.rx.set('/f', 'ok');
    const flaky = (await jsonOf(['webhooks', 'history', 'flaky'])).records.reverse(); // oldest first
    expect(flaky).toHaveLength(5);
    // the oldest is retried by hand and gets through: --failed must not send it again
    expect((await govops(['webhooks', 'retry', flaky[0].id])).code).toBe(0);

    const dry = await jsonOf(['webhooks', 'retry', '--failed', 'flaky', '--dry-run']);
    expect(dry.ids).toEqual(flaky.slice(1).map((r: any) => r.id));
    expect(dry.records.every((r: any) => r.webhookId === String(f.id))).toBe(true);

    await w.clearRequests();
    const two = await govops(['webhooks', 'retry', '--failed', 'flaky', '--max', '2', '-o', 'json']);
    expect(two.code).toBe(0);
    expect(two.stderr).toContain('2 more failed deliveries');
    expect(JSON.parse(two.stdout).results.map((r: any) => r.historyId)).toEqual([flaky[1].id, flaky[2].id]);
    const { requests } = await w.control('GET', '/_sandbox/requests');
    expect(requests.filter((r: any) => r.method === 'POST').map((r: any) => r.path)).toEqual(
      [flaky[1].id, flaky[2].id].map((id: string) => `/webhooks/history/retry/${id}`),
    );
    expect((await jsonOf(['webhooks', 'retry', '--failed', 'flaky', '--dry-run'])).ids).toEqual([flaky[3].id, flaky[4].id]);

    // without NAME: only webhooks govops manages (the state), or --all-webhooks
    const none = await govops(['webhooks', 'retry', '--failed', '--dry-run']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('records no webhook govops manages');
    const state = await stateFile('state-managed.json', [{ name: 'other', id: String(g.id) }]);
    const managed = await jsonOf(['webhooks', 'retry', '--failed', '--dry-run', '--state', state]);
    expect(managed.records.map((r: any) => r.webhookName)).toEqual(Array(5).fill('other'));
    expect((await jsonOf(['webhooks', 'retry', '--failed', '--all-webhooks', '--dry-run'])).ids).toHaveLength(7);
    expect((await jsonOf(['webhooks', 'retry', '--failed', '--all-webhooks', '--since', '1ms', '--dry-run'])).ids).toHaveLength(0);
  });

  it('--failed NAME retries only the webhook govops manages under that name, not another owner\'s of the same name', async () => {
    w = await startWorld();
    // Webhook names are not unique in the service: another team made its own "alerts".
    const [ours, theirs] = await w.createHooks([hookItem(w, 'alerts', '/ours'), hookItem(w, 'alerts', '/theirs')]);
    w.rx.set('/ours', 503);
    w.rx.set('/theirs', 503);
    await w.fire('modelAccessRequested');
    const state = await stateFile('state-alerts.json', [{ name: 'alerts', id: String(ours.id) }]);

    const dry = await jsonOf(['webhooks', 'retry', '--failed', 'alerts', '--dry-run', '--state', state]);
    expect(dry.records.map((r: any) => r.webhookId)).toEqual([String(ours.id)]);
    const run = await govops(['webhooks', 'retry', '--failed', 'alerts', '--state', state]);
    expect(run.code).toBe(1); // still failing
    expect([w.rx.hits.get('/ours'), w.rx.hits.get('/theirs')]).toEqual([2, 1]);

    // Without a state entry for the name, two live webhooks of that name are ambiguous: nothing is retried...
    const ambiguous = await govops(['webhooks', 'retry', '--failed', 'alerts']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain(`2 live webhooks are named "alerts" (ids ${ours.id}, ${theirs.id})`);
    expect(w.rx.hits.get('/theirs')).toBe(1);
    // ...unless --all-webhooks says every one of them.
    expect((await jsonOf(['webhooks', 'retry', '--failed', 'alerts', '--all-webhooks', '--dry-run'])).ids).toHaveLength(2);
    // ...also when govops manages one of them (the state names it): --all-webhooks is every one of that name.
    expect((await jsonOf(['webhooks', 'retry', '--failed', 'alerts', '--all-webhooks', '--dry-run', '--state', state])).records.map((r: any) => r.webhookId).sort()).toEqual(
      [String(ours.id), String(theirs.id)].sort(),
    );
  });

  it('--failed NAME and history NAME: the manifest name of a webhook whose name in the service (spec.name) differs, or that name', async () => {
    w = await startWorld();
    // govops manages "Slack Alerts" as the manifest slack-alerts; another team's webhook is literally named slack-alerts
    const [ours, theirs] = await w.createHooks([hookItem(w, 'Slack Alerts', '/ours'), hookItem(w, 'slack-alerts', '/theirs')]);
    w.rx.set('/ours', 503);
    w.rx.set('/theirs', 503);
    await w.fire('modelAccessRequested');
    const state = await stateFile('state-spec-name.json', [{ name: 'slack-alerts', id: String(ours.id) }]);
    for (const name of ['slack-alerts', 'Slack Alerts']) {
      const dry = await jsonOf(['webhooks', 'retry', '--failed', name, '--dry-run', '--state', state]);
      expect(dry.records.map((r: any) => r.webhookId), name).toEqual([String(ours.id)]);
    }
    const history = await jsonOf(['webhooks', 'history', 'slack-alerts', '--state', state]);
    expect(history.records.map((r: any) => r.webhookId)).toContain(String(ours.id));
    // without the state, the name is the one in the service: the other team's
    const named = await jsonOf(['webhooks', 'retry', '--failed', 'slack-alerts', '--dry-run']);
    expect(named.records.map((r: any) => r.webhookId)).toEqual([String(theirs.id)]);
  });

  it("--failed leaves alone a webhook now at an id the state recorded for another one (the service gave the id again)", async () => {
    w = await startWorld();
    const [theirs] = await w.createHooks([hookItem(w, 'theirs', '/theirs')]);
    w.rx.set('/theirs', 503);
    await w.fire('modelAccessRequested');
    // the state recorded govops' own webhook "ours" at this id: deleted since, and the id given to another team's
    const file = join(dir, 'state-reused.json');
    const now = new Date().toISOString();
    const entry = (name: string, id: string, url: string) => ({
      kind: 'Webhook', name, id, origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: now, identity: JSON.stringify([name, url]),
    });
    await writeFile(file, JSON.stringify({ version: 1, fingerprintKey: STATE_KEY, resources: [entry('ours', String(theirs.id), `${w.rx.url}/ours`)] }));
    const dry = await govops(['webhooks', 'retry', '--failed', '--dry-run', '--state', file]);
    expect(dry.code).toBe(1);
    expect(dry.stderr).toContain(`records no webhook govops manages (webhook id ${theirs.id} is now another webhook's)`);
    expect(dry.stdout).not.toContain('Would retry');
    const named = await govops(['webhooks', 'retry', '--failed', 'theirs', '--dry-run', '--state', file]);
    expect(named.code, named.stderr).toBe(0); // NAME: the user names it, whatever the state says
    // its own webhook, recorded before urls compared normalised (`/./x` is `/x`): still its own
    const recorded = `${w.rx.url}/theirs`.replace('/theirs', '/./theirs');
    await writeFile(file, JSON.stringify({ version: 1, fingerprintKey: STATE_KEY, resources: [entry('theirs', String(theirs.id), recorded)] }));
    const own = await govops(['webhooks', 'retry', '--failed', '--dry-run', '--state', file]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain('Would retry');
  });

  it('--failed leaves alone a webhook whose delete is pending (sent, its answer not seen yet), as the daemon does', async () => {
    w = await startWorld();
    const [going, staying] = await w.createHooks([hookItem(w, 'going', '/going'), hookItem(w, 'staying', '/staying')]);
    w.rx.set('/going', 503);
    w.rx.set('/staying', 503);
    await w.fire('modelAccessRequested');
    const file = join(dir, 'state-deleting.json');
    const now = new Date().toISOString();
    const entry = (name: string, id: string, pending?: 'delete') => ({
      kind: 'Webhook', name, id, origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: now, ...(pending ? { pending } : {}),
    });
    await writeFile(file, JSON.stringify({ version: 1, fingerprintKey: STATE_KEY, resources: [entry('going', String(going.id), 'delete'), entry('staying', String(staying.id))] }));
    const dry = await jsonOf(['webhooks', 'retry', '--failed', '--dry-run', '--state', file]);
    expect(dry.records.map((r: any) => r.webhookId)).toEqual([String(staying.id)]);
    const run = await govops(['webhooks', 'retry', '--failed', '--state', file]);
    expect(run.code).toBe(1); // still failing
    expect([w.rx.hits.get('/going'), w.rx.hits.get('/staying')]).toEqual([1, 2]);
  });

  it('an id the service does not know is counted as not retried, not as a retry that failed', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'up', '/u')]);
    await w.fire('modelAccessRequested');
    const ids = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    const r = await govops(['webhooks', 'retry', ids[0], '99999']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('webhook history record 99999 not found');
    // the old code: "2 retried: 1 delivered, 1 failed" (99999 was never retried)
    expect(r.stderr).toContain('1 retried: 1 delivered, 0 failed; 1 not retried (the retry request failed: listed above)');
  });

  it('retries each id once, in bounded parallel, and exits 1 when a retry fails again', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    await w.fire('modelAccessRequested');
    await w.fire('modelAccessRequested');
    const ids = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    await w.clearRequests();
    const r = await govops(['webhooks', 'retry', ids[0], ids[0], ids[1], ids[0], '--concurrency', '2']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('2 retried: 0 delivered, 2 failed');
    const { requests } = await w.control('GET', '/_sandbox/requests');
    expect(requests.filter((x: any) => x.method === 'POST')).toHaveLength(2);

    const dry = await govops(['webhooks', 'retry', ids[0], '--dry-run']);
    expect([dry.code, dry.stdout.trim()]).toEqual([0, `Would retry history records ${ids[0]}`]);
    const typo = await govops(['webhooks', 'retry', 'down']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toContain('--failed NAME');
    const unknown = await govops(['webhooks', 'retry', '99999']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(/99999\s+error/);
    const misuse = await govops(['webhooks', 'retry', ids[0], '--max', '3']);
    expect(misuse.code).toBe(1);
  });
});

describe('webhooks retry --failed and history NAME with a state named and not found (a typo of --state)', () => {
  it('is an error saying there is no state there, as webhooks list says; not "the state records no webhook govops manages", hint "pass --state"', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    await w.fire('modelAccessRequested');
    const typo = join(dir, 'no-such-state.json');
    for (const args of [['webhooks', 'retry', '--failed'], ['webhooks', 'retry', '--failed', 'down'], ['webhooks', 'history', 'down']]) {
      const r = await govops([...args, '--state', typo]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(/there is no govops state at .*no-such-state\.json/);
      expect(r.stdout).toBe('');
    }
    // without one named, none is managed: NAME is the webhook of that name in the service
    const none = await govops(['webhooks', 'retry', '--failed', 'down', '--dry-run']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toMatch(/Would retry 1 deliveries/);
  });
});

describe('govops webhooks retry ID... with a token the service refuses (401)', () => {
  it('stops at the first refusal and reports it as the error it is, with the token hint; not "N retried: 0 delivered, N failed"', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    for (let i = 0; i < 3; i++) await w.fire('modelAccessRequested');
    const ids = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    expect(ids).toHaveLength(3);
    await w.clearRequests();
    for (const output of [[], ['-o', 'json']]) {
      const r = await govops(['webhooks', 'retry', ...ids, '--concurrency', '1', ...output], 'an-expired-token');
      expect(r.code).toBe(1);
      // the old code: a table of three "error ... Invalid or unknown token" rows and "3 retried: 0 delivered, 3 failed"
      expect(r.stderr).toMatch(/^error: service error: POST \/webhooks\/history\/retry\/\d+: 401 /m);
      expect(r.stderr).toMatch(/hint: check GOVOPS_TOKEN/);
      expect(r.stderr).not.toContain('retried');
      expect(r.stdout).toBe('');
    }
    const { requests } = await w.control('GET', '/_sandbox/requests');
    expect(requests.filter((x: any) => x.method === 'POST')).toHaveLength(2); // one refused retry per run
  });
});

describe('govops webhooks retry with a token the service may not retry with (403)', () => {
  it('sends one retry, not one per id, and says once what was refused and which permission; the rest not attempted', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    for (let i = 0; i < 4; i++) await w.fire('modelAccessRequested');
    const ids = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    expect(ids).toHaveLength(4);
    const isRetry = (path: string): boolean => path.startsWith('/webhooks/history/retry/');
    const forbidden = JSON.stringify({ statusCode: 403, error: 'Forbidden', message: 'not allowed to retry webhook deliveries' });
    const proxy = await rewritingProxy(w.url, (q, res) => (isRetry(q.path) ? { status: 403, headers: { 'content-type': 'application/json' }, body: forbidden } : res));
    const run = (args: string[]) =>
      runGovops(['webhooks', 'retry', ...args], { cwd: dir, env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined } });
    try {
      for (const args of [ids, ['--failed', 'down', '--all-webhooks']]) {
        proxy.requests.length = 0;
        const r = await run(args);
        expect(r.code, r.stderr).toBe(1);
        // the old code: 4 retry requests (default concurrency 4), 4 "error ... 403" rows, "4 retried: 0 delivered, 4 failed"
        expect(proxy.requests.filter((x) => x.startsWith('POST'))).toHaveLength(1);
        expect(r.stderr.match(/403/g)).toHaveLength(1);
        expect(r.stderr).toMatch(/^error: .*POST \/webhooks\/history\/retry\/\d+: 403 /m);
        expect(r.stderr).toMatch(/hint: .*permission/);
        expect(r.stderr).toMatch(/not attempted: 3 /);
        expect(r.stderr).not.toContain('retried:');
        expect(r.stdout).toBe('');
      }
    } finally {
      await proxy.close();
    }
  });
});

describe('govops webhooks retry rate limited (429 past the client retries)', () => {
  it('sends one retry, not one per id: the run stops there, the rest not attempted, the error is the 429', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    for (let i = 0; i < 4; i++) await w.fire('modelAccessRequested');
    const ids = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    const limited = JSON.stringify({ statusCode: 429, error: 'Too Many Requests', message: 'slow down' });
    const proxy = await rewritingProxy(w.url, (q, res) =>
      q.path.startsWith('/webhooks/history/retry/') ? { status: 429, headers: { 'content-type': 'application/json' }, body: limited } : res,
    );
    try {
      const r = await runGovops(['webhooks', 'retry', ...ids, '--retries', '0', '-o', 'json'], {
        cwd: dir,
        env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined },
      });
      expect(r.code, r.stderr).toBe(1);
      // the old code: 4 retry requests, each a failed row, "4 retried: 0 delivered, 4 failed"
      expect(proxy.requests.filter((x) => x.startsWith('POST'))).toHaveLength(1);
      expect(r.stderr).toMatch(/not attempted: 3 \(history ids .*\), the service rate limits the retries/);
      expect(r.stderr).toMatch(/^error: .*POST \/webhooks\/history\/retry\/\d+: 429 /m);
    } finally {
      await proxy.close();
    }
  });
});

describe('govops webhooks retry refused (403) after a retry got through', () => {
  it('shows what was retried and names the ids not attempted (-o json notAttempted), exit 1; they were dropped silently', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    for (let i = 0; i < 3; i++) await w.fire('modelAccessRequested');
    const ids = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    w.rx.set('/d', 'ok');
    let retries = 0;
    const forbidden = JSON.stringify({ statusCode: 403, error: 'Forbidden', message: 'not allowed' });
    const proxy = await rewritingProxy(w.url, (q, res) =>
      q.path.startsWith('/webhooks/history/retry/') && ++retries > 1 ? { status: 403, headers: { 'content-type': 'application/json' }, body: forbidden } : res,
    );
    try {
      const r = await runGovops(['webhooks', 'retry', ...ids, '--concurrency', '1', '-o', 'json'], {
        cwd: dir,
        env: { GOVOPS_URL: proxy.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined },
      });
      expect(r.code, r.stderr).toBe(1);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ retried: 2, delivered: 1, failed: 1, notAttempted: [ids[2]] });
      expect(r.stderr).toContain(`not attempted: 1 (history ids ${ids[2]})`);
      expect(proxy.requests.filter((x) => x.startsWith('POST'))).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('govops webhooks retry ID... while the service cannot be reached (connection refused)', () => {
  it('stops at the first refusal and says the service cannot be reached; not "N retried: 0 delivered, N failed", each id tried', async () => {
    const { createServer } = await import('node:net');
    // a port nothing listens on: taken, then closed
    const port = await new Promise<number>((done) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => done(p));
      });
    });
    const r = await runGovops(['webhooks', 'retry', '1', '2', '3', '--concurrency', '1', '--retries', '0'], {
      cwd: dir,
      env: { GOVOPS_URL: `http://127.0.0.1:${port}`, GOVOPS_TOKEN: 'a-token', GOVOPS_LOG_LEVEL: undefined },
    });
    expect(r.code).toBe(1);
    // the old code: three "error ... ECONNREFUSED" rows and "3 retried: 0 delivered, 3 failed"
    expect(r.stderr).toMatch(/^error: cannot reach the service: POST \/webhooks\/history\/retry\/1: /m);
    expect(r.stderr).not.toContain('retried');
    expect(r.stdout).toBe('');
  });
});

describe('govops webhooks events', () => {
  it('lists what the service serves, equal to the names shipped in the schemas', async () => {
    w = await startWorld();
    const served = await w.call('GET', '/webhooks/actions');
    const out = await jsonOf(['webhooks', 'events']);
    expect(out).toEqual({ events: served, unknownToGovops: [], notServed: [] });
    const schemaDir = new URL('../../schemas/', import.meta.url);
    const item = JSON.parse(await readFile(new URL('webhook-item.json', schemaDir), 'utf8'));
    expect(item.$defs.notification.enum).toEqual(served);
    const bundle = await readFile(new URL('govops.schema.json', schemaDir), 'utf8');
    for (const name of served) expect(bundle).toContain(`"${name}"`);
    const text = await govops(['webhooks', 'events']);
    expect(text.stdout.trim().split('\n')).toEqual(served);
  });
});

describe('govops webhooks list', () => {
  it('shows each live webhook with its manifest and owner: managed, adopted, unmanaged', async () => {
    w = await startWorld();
    const manifests = join(dir, 'list-manifests');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(manifests, { recursive: true });
    const manifest = (name: string) => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: ${w.rx.url}/${name}
  global: false
  notificationType: [modelAccessRequested]
  actionType: triggered
`;
    await writeFile(join(manifests, 'hooks.yaml'), `${manifest('ours')}---\n${manifest('adopt-me')}`);
    await w.createHooks([
      { url: `${w.rx.url}/adopt-me`, name: 'adopt-me', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' },
      hookItem(w, 'stranger', '/s'),
    ]);
    const state = join(dir, 'list-state.json');
    const applied = await govops(['apply', 'list-manifests', '--state', state]);
    expect(applied.code, applied.stderr).toBe(0);

    const rows = await jsonOf(['webhooks', 'list', 'list-manifests', '--state', state]);
    const byName = Object.fromEntries(rows.map((r: any) => [r.name, r]));
    expect(byName.ours).toMatchObject({ owner: 'managed', manifest: { name: 'ours', file: 'list-manifests/hooks.yaml', line: 1 } });
    expect(byName['adopt-me']).toMatchObject({ owner: 'adopted', manifest: { name: 'adopt-me', file: 'list-manifests/hooks.yaml' } });
    expect(byName.stranger).toMatchObject({ owner: 'unmanaged', manifest: null });

    const text = await govops(['webhooks', 'list', 'list-manifests', '--state', state]);
    expect(text.stdout).toMatch(/stranger\s+unmanaged\s+-/);
    expect(text.stderr).toContain('3 webhooks: 1 managed, 1 adopted, 1 unmanaged');

    // a managed webhook deleted behind govops' back is reported
    await w.call('DELETE', `/webhooks/${byName.ours.id}`);
    const after = await govops(['webhooks', 'list', 'list-manifests', '--state', state]);
    expect(after.stderr).toContain('Webhook/ours is in the state');

    // a create an interrupted run recorded as intended, not confirmed (no id yet): said so, not "(id )"
    const saved = JSON.parse(await readFile(state, 'utf8'));
    saved.resources.push({ ...saved.resources.find((r: any) => r.name === 'ours'), name: 'pending-one', id: '', pending: 'create' });
    await writeFile(state, JSON.stringify(saved));
    const pending = await govops(['webhooks', 'list', 'list-manifests', '--state', state]);
    expect(pending.stderr).not.toContain('(id )');
    expect(pending.stderr).toContain('Webhook/pending-one: its create was not confirmed (an interrupted run); the next plan looks for it in the service');
  });

  it('a manifest path too long for its column is cut before its line number, which stays', async () => {
    w = await startWorld();
    const folder = `list-${'deep'.repeat(25)}`;
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(dir, folder), { recursive: true });
    await writeFile(
      join(dir, folder, 'hooks.yaml'),
      `# a comment\napiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: far\nspec:\n  url: ${w.rx.url}/far\n  global: false\n  notificationType: [modelAccessRequested]\n  actionType: triggered\n`,
    );
    const state = join(dir, 'list-deep-state.json');
    const applied = await govops(['apply', folder, '--state', state]);
    expect(applied.code, applied.stderr).toBe(0);
    const text = await govops(['webhooks', 'list', folder, '--state', state]);
    // the old code cut `file:line` as one text: `list-deepdeep…deep/hoo…`, the line number lost
    expect(text.stdout).toMatch(/far\s+managed\s+list-deep\S*…:2\s/);
  });

  it("another's webhook that merely shares a managed webhook's name is not given its manifest nor called adoptable (plan never adopts it)", async () => {
    w = await startWorld();
    const manifests = join(dir, 'list-shared');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(manifests, { recursive: true });
    const manifest = (name: string) => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: ${w.rx.url}/${name}
  global: false
  notificationType: [modelAccessRequested]
  actionType: triggered
`;
    await writeFile(join(manifests, 'hooks.yaml'), `${manifest('shared')}---\n${manifest('new-one')}`);
    const state = join(dir, 'list-shared-state.json');
    const applied = await govops(['apply', 'list-shared', '--state', state]);
    expect(applied.code, applied.stderr).toBe(0);
    // another user's webhook of the same name, and one of a manifest's name that govops does not manage yet
    const [theirs] = await w.createHooks([{ url: `${w.rx.url}/theirs`, name: 'shared', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' }], w.user);
    await w.call('DELETE', `/webhooks/${(await jsonOf(['webhooks', 'list', 'list-shared', '--state', state])).find((r: any) => r.name === 'new-one').id}`);
    await w.createHooks([{ url: `${w.rx.url}/new-one`, name: 'new-one', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' }]);
    await writeFile(state, JSON.stringify({ ...JSON.parse(await readFile(state, 'utf8')), resources: JSON.parse(await readFile(state, 'utf8')).resources.filter((r: any) => r.name !== 'new-one') }));

    const plan = await govops(['plan', 'list-shared', '--state', state]);
    expect(plan.stderr + plan.stdout).toContain('never deletes it');
    const rows = await jsonOf(['webhooks', 'list', 'list-shared', '--state', state]);
    const other = rows.find((r: any) => String(r.id) === String(theirs.id));
    expect(other).toMatchObject({ name: 'shared', owner: 'unmanaged', manifest: null });
    expect(rows.find((r: any) => r.name === 'new-one')).toMatchObject({ owner: 'unmanaged', manifest: { name: 'new-one' } });
    const text = await govops(['webhooks', 'list', 'list-shared', '--state', state]);
    expect(text.stderr).toContain('3 webhooks: 1 managed, 0 adopted, 2 unmanaged (1 with a manifest of the same name: the next apply adopts them)');
    // where adoption is left to the operator (GOVOPS_NO_ADOPT), the next apply blocks them: the old code said it adopts them
    const guarded = await runGovops(['webhooks', 'list', 'list-shared', '--state', state], { cwd: dir, env: { GOVOPS_URL: w.url, GOVOPS_TOKEN: w.admin, GOVOPS_NO_ADOPT: 'true' } });
    expect(guarded.stderr).toContain('3 webhooks: 1 managed, 0 adopted, 2 unmanaged (1 with a manifest of the same name: the next apply blocks them, GOVOPS_NO_ADOPT; govops state adopt records one)');
    expect(guarded.stderr).not.toContain('adopts them');

    // two unmanaged webhooks of a manifest's name: the plan refuses the match (remove the duplicates), adopts neither
    await w.createHooks([{ url: `${w.rx.url}/new-one-2`, name: 'new-one', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' }], w.user);
    const twice = await govops(['plan', 'list-shared', '--state', state]);
    expect(twice.stderr + twice.stdout).toContain('2 live resources match its identity');
    const listed = await govops(['webhooks', 'list', 'list-shared', '--state', state]);
    expect(listed.stderr).toContain('4 webhooks: 1 managed, 0 adopted, 3 unmanaged (2 share the name of a manifest: the next plan refuses to match them until one is removed)');
    expect(listed.stderr).not.toContain('adopts');
  });

  it("a copy govops' own create left (recorded in the state as the entry's copy) is managed, as plan --prune deletes it; another of that name stays unmanaged", async () => {
    w = await startWorld();
    const [kept, copy, theirs] = await w.createHooks([hookItem(w, 'alpha', '/a'), hookItem(w, 'alpha', '/a'), hookItem(w, 'alpha', '/other')]);
    const file = join(dir, 'copies-state.json');
    await writeFile(
      file,
      JSON.stringify({
        version: 2,
        fingerprintKey: STATE_KEY,
        resources: [{ kind: 'Webhook', name: 'alpha', id: String(kept.id), origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: new Date().toISOString(), copies: [String(copy.id)] }],
      }),
    );
    const rows = await jsonOf(['webhooks', 'list', '--state', file]);
    const owner = (id: unknown) => rows.find((r: any) => String(r.id) === String(id))?.owner;
    // the old code: the copy "unmanaged", which govops never deletes, while apply --prune deletes it (plan/duplicates.ts)
    expect([owner(kept.id), owner(copy.id), owner(theirs.id)]).toEqual(['managed', 'managed', 'unmanaged']);
    const text = await govops(['webhooks', 'list', '--state', file]);
    expect(text.stderr).toContain('3 webhooks: 2 managed, 0 adopted, 1 unmanaged');
    expect(text.stderr).toContain(`note: webhook ${copy.id} is a copy of Webhook/alpha (id ${kept.id}) govops' own create left: apply --prune deletes it`);
  });

  it("a webhook now at an id the state recorded for another one (the service gave the id again) is unmanaged, as plan and retry --failed take it", async () => {
    w = await startWorld();
    const [theirs] = await w.createHooks([hookItem(w, 'theirs', '/theirs')]);
    const file = join(dir, 'list-reused.json');
    const now = new Date().toISOString();
    const ours = { kind: 'Webhook', name: 'ours', id: String(theirs.id), origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: now, identity: JSON.stringify(['ours', `${w.rx.url}/ours`]) };
    await writeFile(file, JSON.stringify({ version: 1, fingerprintKey: STATE_KEY, resources: [ours] }));
    const rows = await jsonOf(['webhooks', 'list', '--state', file]);
    // the old code: owner "managed", the other team's webhook taken for govops' own Webhook/ours
    expect(rows).toEqual([expect.objectContaining({ id: String(theirs.id), name: 'theirs', owner: 'unmanaged', manifest: null })]);
    const text = await govops(['webhooks', 'list', '--state', file]);
    expect(text.stderr).toContain('1 webhook: 0 managed, 0 adopted, 1 unmanaged');
    expect(text.stderr).toContain(`note: Webhook/ours: its recorded id ${theirs.id} is now another webhook's ("theirs"); the next plan forgets the record`);
    // history of NAME: not the other webhook's deliveries (the old code took its id, and its name, for Webhook/ours)
    await w.fire('modelAccessRequested');
    const history = await jsonOf(['webhooks', 'history', 'ours', '--state', file]);
    expect(history.records).toEqual([]);
    expect((await jsonOf(['webhooks', 'history', 'theirs', '--state', file])).records.length).toBeGreaterThan(0);
  });

  it('a state named and not found (a typo of --state) is an error, not every webhook shown unmanaged; without one, none is managed', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'stranger', '/s')]);
    const typo = await govops(['webhooks', 'list', '--state', join(dir, 'no-such-state.json')]);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(/there is no govops state at .*no-such-state\.json/);
    expect(typo.stdout).toBe('');
    const none = await govops(['webhooks', 'list']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toMatch(/1 webhook: 0 managed, 0 adopted, 1 unmanaged/);
  });

  it("reads the manifests in the operator's secret scope, as validate and plan do (--secret-env-prefix, GOVOPS_SECRET_ENV_PREFIX)", async () => {
    w = await startWorld();
    const manifests = join(dir, 'list-scope');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(manifests, { recursive: true });
    await writeFile(
      join(manifests, 'hook.yaml'),
      `apiVersion: govops/v1
kind: Webhook
metadata:
  name: signed
spec:
  url: ${w.rx.url}/signed
  global: false
  notificationType: [modelAccessRequested]
  actionType: triggered
  secret: { fromEnv: ACME_HOOK_SECRET }
`,
    );
    const valid = await govops(['validate', 'list-scope', '--secret-env-prefix', 'ACME_']);
    expect(valid.code, valid.stderr).toBe(0);

    await stateFile('list-scope-state.json', []);
    const byFlag = await govops(['webhooks', 'list', 'list-scope', '--secret-env-prefix', 'ACME_', '--state', join(dir, 'list-scope-state.json')]);
    expect(byFlag.code, byFlag.stderr).toBe(0);
    expect(byFlag.stderr).not.toContain('manifest problem');

    const byEnv = await runGovops(['webhooks', 'list', 'list-scope', '--state', join(dir, 'list-scope-state.json')], {
      cwd: dir,
      env: { GOVOPS_URL: w.url, GOVOPS_TOKEN: w.admin, GOVOPS_LOG_LEVEL: undefined, GOVOPS_SECRET_ENV_PREFIX: 'ACME_' },
    });
    expect(byEnv.code, byEnv.stderr).toBe(0);
    expect(byEnv.stderr).not.toContain('manifest problem');
  });
});

describe('a live webhook url carrying a credential (another team\'s token in its query)', () => {
  it('is shown without its query by webhooks list and history, in -o json as in the table', async () => {
    w = await startWorld();
    const TOKEN = 'OtherTeamHookToken7272';
    const CHAT = 'aB3dE5fG7hJ9kL1mN3pQ5rS7';
    const [hook] = await w.createHooks([
      hookItem(w, 'theirs', `/t?access_token=${TOKEN}`),
      hookItem(w, 'plain', '/p?page=2'),
      // a chat webhook's url: its token is its path
      hookItem(w, 'chat', `/services/T0AB12CD3/B0EF45GH6/${CHAT}`),
    ]);
    await w.fire('modelAccessRequested');
    const listed = await jsonOf(['webhooks', 'list']);
    const theirs = listed.find((r: any) => r.name === 'theirs');
    expect(theirs.url).toBe(`${w.rx.url}/t?…`);
    // a url carrying none is as the service sent it
    expect(listed.find((r: any) => r.name === 'plain').url).toBe(`${w.rx.url}/p?page=2`);
    const history = await jsonOf(['webhooks', 'history', 'theirs']);
    expect(history.records.length).toBeGreaterThan(0);
    expect(history.records[0].webhookId).toBe(String(hook.id));
    const retried = await jsonOf(['webhooks', 'retry', history.records[0].id]);
    expect(retried.results).toHaveLength(1);
    for (const out of [listed, history, retried]) expect(JSON.stringify(out)).not.toContain(TOKEN);
    expect(listed.find((r: any) => r.name === 'chat').url).toBe(`${w.rx.url}/…`);
    const table = await govops(['webhooks', 'list']);
    expect(table.stdout).toContain('chat');
    expect(table.stdout + table.stderr).not.toContain(CHAT);
    expect(JSON.stringify(listed)).not.toContain(CHAT);
  });
});

describe('webhooks retry --failed with a state named that cannot be read (not missing)', () => {
  it('is the I/O error naming the path (exit 1, nothing retried); not "there is no govops state" (check --state)', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    await w.fire('modelAccessRequested');
    // a file where the state's folder should be: stat fails ENOTDIR, as EACCES on the folder would (the tests run as root)
    await writeFile(join(dir, 'not-a-folder'), '');
    const unreadable = join(dir, 'not-a-folder', 'state.json');
    await w.clearRequests();
    for (const args of [['webhooks', 'retry', '--failed'], ['webhooks', 'retry', '--failed', 'down'], ['webhooks', 'history', 'down'], ['webhooks', 'list']]) {
      const r = await govops([...args, '--state', unreadable]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain(`cannot read state file ${unreadable}: ENOTDIR`);
      expect(r.stderr).not.toContain('there is no govops state');
      expect(r.stdout).toBe('');
    }
    const { requests } = await w.control('GET', '/_sandbox/requests');
    expect(requests.filter((x: any) => x.method === 'POST')).toHaveLength(0);
  });
});

describe('webhooks retry -o json', () => {
  it('gives each failed retry request its stable error code, beside its message', async () => {
    w = await startWorld();
    await w.createHooks([hookItem(w, 'down', '/d')]);
    w.rx.set('/d', 502);
    await w.fire('modelAccessRequested');
    const [id] = (await jsonOf(['webhooks', 'history'])).records.map((r: any) => r.id);
    const r = await govops(['webhooks', 'retry', id, '99999', '-o', 'json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ retried: 2, delivered: 0, failed: 2 });
    const byId = new Map(out.results.map((x: any) => [x.historyId, x]));
    // a retry that failed at the receiver: its record says why (status, response code); no request error
    expect(byId.get(id)).toMatchObject({ ok: false, record: { statusCode: 502 } });
    expect(byId.get(id)).not.toHaveProperty('code');
    // the old code: only the service's text ("error": "..."), nothing stable to branch on
    expect(byId.get('99999')).toMatchObject({ ok: false, code: 'GOVOPS_API_NOT_FOUND' });
    expect(typeof (byId.get('99999') as any).error).toBe('string');
  });
});
