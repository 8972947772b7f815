/** Each server behaviour does what it says on the wire (so the tests run under them can fail). */
import { afterEach, describe, expect, it } from 'vitest';
import { BEHAVIOURS, parseBehaviours, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';
import { bearer, call, settle, start } from './harness.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const SQL = {
  type: 'sql_analytics',
  autoBootstrap: false,
  config: { host: 'sql.example.com', database: 'd', schema: 's', username: 'u', password: 'secret-pw', port: 1433, colour: 'red' },
};
const HOOK = { url: 'http://127.0.0.1:9/x', name: 'h', global: true, notificationType: ['modelCreated', 'tagCreated', 'userCreated', 'modelDeleted'], actionType: 'triggered' };

async function withSql(behaviours: string[]): Promise<{ created: any; item: any }> {
  sb = await start({ behaviours, transitionMs: 20 });
  const created = await call(sb, 'POST', '/integrations', { body: SQL });
  expect(created.status).toBe(200);
  await settle(sb, created.body.id);
  const item = (await call(sb, 'GET', `/integrations/${created.body.id}`)).body;
  return { created: created.body, item };
}

describe('server behaviours', () => {
  it('default: defaults filled, credentials masked, ids strings (numbers in the status body), unknown fields dropped', async () => {
    const { created, item } = await withSql([]);
    expect(created).toMatchObject({ id: '1', status: 'creating' });
    expect(item.config).toEqual({
      host: 'sql.example.com',
      database: 'd',
      schema: 's',
      username: '********',
      password: '********',
      port: 1433,
      metadataDelimiters: { hashDelimiter: '|', hashKeyDelimiter: ':', arrayDelimiter: ',' },
      impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION' },
    });
    expect((await call(sb!, 'GET', '/integrations/1/status')).body).toEqual({ id: 1, status: 'enabled' });
  });

  it('omit-defaults: fields at their default are left out, sent or not', async () => {
    const { item } = await withSql(['omit-defaults']);
    expect(item.config).toEqual({ host: 'sql.example.com', database: 'd', schema: 's', username: '********', password: '********' });
  });

  it('echo-sent: exactly the known fields sent', async () => {
    const { item } = await withSql(['echo-sent']);
    expect(item.config).toEqual({ host: 'sql.example.com', database: 'd', schema: 's', username: '********', password: '********', port: 1433 });
  });

  it('null-unset: fields without a value are null', async () => {
    const { item } = await withSql(['null-unset']);
    expect(item.config.connectArgs).toBeNull();
    expect(item.config.port).toBe(1433);
  });

  it('extra-fields: fields govops does not know, top level and nested', async () => {
    const { created, item } = await withSql(['extra-fields']);
    expect(created.requestedAt).toEqual(expect.any(String));
    expect(item).toMatchObject({ createdAt: expect.any(String), dataSourceCount: 0 });
    expect(item.config).toMatchObject({ connectionTimeoutSeconds: 30, serviceVersion: '2024.1', metadataDelimiters: { lastCheckedAt: expect.any(String) } });
  });

  it('numeric-ids: integration ids are numbers everywhere', async () => {
    const { created, item } = await withSql(['numeric-ids']);
    expect(created.id).toBe(1);
    expect(item.id).toBe(1);
    expect((await call(sb!, 'GET', '/integrations')).body[0].id).toBe(1);
  });

  it('string-ids: webhook ids and createdBy, and the status id, are strings', async () => {
    await withSql(['string-ids']);
    expect((await call(sb!, 'GET', '/integrations/1/status')).body.id).toBe('1');
    const made = await call(sb!, 'POST', '/webhooks', { token: bearer(sb!.adminToken), body: { webhooks: [HOOK] } });
    expect(made.body.createdWebhooks[0].id).toBe('1');
    const list = await call(sb!, 'GET', '/webhooks', { token: bearer(sb!.adminToken) });
    expect(list.body[0]).toMatchObject({ id: '1', createdBy: expect.any(String) });
  });

  it('omit-masked: credentials are left out instead of masked', async () => {
    const { item } = await withSql(['omit-masked']);
    expect(item.config).not.toHaveProperty('password');
    expect(item.config).not.toHaveProperty('username');
    expect(item.config.host).toBe('sql.example.com');
  });

  it('shuffle: lists come in another order', async () => {
    let n = 0;
    const random = () => [0.9, 0.1, 0.5, 0.3][n++ % 4]!;
    sb = await start({ behaviours: ['shuffle'], random, transitionMs: 20 });
    for (let i = 1; i <= 5; i++) {
      await call(sb, 'POST', '/integrations', { body: { ...SQL, config: { ...SQL.config, host: `h${i}.example.com` } } });
    }
    const orders = new Set<string>();
    for (let i = 0; i < 4; i++) orders.add((await call(sb, 'GET', '/integrations')).body.map((x: any) => x.id).join(','));
    expect([...orders].some((o) => o !== '1,2,3,4,5')).toBe(true);
    await call(sb, 'POST', '/webhooks', { token: bearer(sb.adminToken), body: { webhooks: [HOOK] } });
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add((await call(sb, 'GET', '/webhooks/1', { token: bearer(sb.adminToken) })).body.notificationType.join(','));
    expect([...seen].some((o) => o !== HOOK.notificationType.join(','))).toBe(true);
  });

  it('validation-warning: a passing validation reports a warning', async () => {
    const { created } = await withSql(['validation-warning']);
    expect(created.validationResults.status).toBe('warning');
    expect(created.validationResults.validationTests.some((t: any) => t.status === 'warning')).toBe(true);
  });

  it('skip-creating and skip-editing: the final status at once', async () => {
    const { created } = await withSql(['skip-creating', 'skip-editing']);
    expect(created.status).toBe('enabled');
    const put = await call(sb!, 'PUT', '/integrations/1', { body: { ...SQL, config: { ...SQL.config, port: 1500 } } });
    expect(put.body.status).toBe('enabled');
  });

  it('names are checked; exclusive pairs refused; the CLI says so', async () => {
    expect([...parseBehaviours('shuffle, omit-masked')]).toEqual(['shuffle', 'omit-masked']);
    expect(() => parseBehaviours('shufle')).toThrow(/unknown behaviour "shufle"/);
    expect(() => parseBehaviours(['omit-defaults', 'echo-sent'])).toThrow(/exclude each other/);
    const res = await runGovops(['sandbox', '--port', '0', '--behaviour', 'numeric-ids,string-ids']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/--behaviour: behaviours numeric-ids and string-ids exclude each other/);
  });

  it('govops sandbox --help names every behaviour', async () => {
    const res = await runGovops(['sandbox', '--help']);
    expect(res.code).toBe(0);
    const help = res.stdout.replace(/\s+/g, ' ');
    const missing = Object.keys(BEHAVIOURS).filter((b) => !new RegExp(`[ ,:]${b}[,( ]`).test(help));
    expect(missing).toEqual([]);
  });
});

describe('server behaviours of issue 22', () => {
  it('reuse-ids: a new integration or webhook gets the smallest free id (a deleted one comes back)', async () => {
    const { created } = await withSql(['reuse-ids']);
    const second = await call(sb!, 'POST', '/integrations', { body: { ...SQL, config: { ...SQL.config, host: 'two.example.com' } } });
    expect(second.body.id).toBe('2');
    await settle(sb!, second.body.id);
    expect((await call(sb!, 'DELETE', `/integrations/${created.id}`)).status).toBe(200);
    expect(await settle(sb!, created.id)).toBe('removed');
    const third = await call(sb!, 'POST', '/integrations', { body: { ...SQL, config: { ...SQL.config, host: 'three.example.com' } } });
    expect(third.body.id).toBe('1');
    const hooks = await call(sb!, 'POST', '/webhooks', { body: { webhooks: [HOOK, { ...HOOK, name: 'h2' }] }, token: bearer(sb!.adminToken) });
    expect(hooks.body.createdWebhooks.map((w: { id: number }) => w.id)).toEqual([1, 2]);
    await call(sb!, 'DELETE', '/webhooks/1', { token: bearer(sb!.adminToken) });
    const again = await call(sb!, 'POST', '/webhooks', { body: { webhooks: [{ ...HOOK, name: 'h3' }] }, token: bearer(sb!.adminToken) });
    expect(again.body.createdWebhooks[0].id).toBe(1);
  });

  it('503-after-success-all: every write is carried out; the first success of an update or delete at a path is answered 503, a re-sent one as it is', async () => {
    sb = await start({ behaviours: ['503-after-success-all'], transitionMs: 20 });
    const lost = await call(sb, 'POST', '/integrations', { body: SQL });
    expect(lost.status).toBe(503);
    const id = (await call(sb, 'GET', '/integrations')).body[0].id as string;
    expect(await settle(sb, id)).toBe('enabled');
    const edit = { ...SQL, config: { ...SQL.config, port: 1500 } };
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: edit })).status).toBe(503);
    expect(await settle(sb, id)).toBe('enabled');
    expect((await call(sb, 'GET', `/integrations/${id}`)).body.config.port).toBe(1500); // carried out
    expect((await call(sb, 'PUT', `/integrations/${id}`, { body: edit })).status).toBe(200); // the re-sent PUT
    await settle(sb, id);
    const admin = { token: bearer(sb.adminToken) };
    expect((await call(sb, 'POST', '/webhooks', { body: { webhooks: [HOOK] }, ...admin })).status).toBe(503);
    const hook = (await call(sb, 'GET', '/webhooks', admin)).body[0].id as number;
    expect((await call(sb, 'DELETE', `/webhooks/${hook}`, admin)).status).toBe(503);
    expect((await call(sb, 'DELETE', `/webhooks/${hook}`, admin)).status).toBe(404); // it was deleted
    expect((await call(sb, 'DELETE', `/integrations/${id}`)).status).toBe(503);
    expect(await settle(sb, id)).toBe('removed');
    // dry runs are answered as they are
    expect((await call(sb, 'POST', '/integrations?dryRun=true', { body: SQL })).status).toBe(200);
  });

  it('reset starts the behaviours afresh: after it, integration 1 is new to 503-after-success-all and status-404-lag', async () => {
    sb = await start({ behaviours: ['503-after-success-all', 'status-404-lag'], transitionMs: 60_000 });
    const s = sb;
    const edit = { ...SQL, config: { ...SQL.config, port: 1500 } };
    const run = async (): Promise<number[]> => {
      const out = [(await call(s, 'POST', '/integrations', { body: SQL })).status];
      for (let i = 0; i < 3; i++) out.push((await call(s, 'GET', '/integrations/1/status')).status);
      s.finishTransitions();
      out.push((await call(s, 'PUT', '/integrations/1', { body: edit })).status);
      return out;
    };
    // A lost create, two lagging status answers, then current; the first update at the path lost.
    expect(await run()).toEqual([503, 404, 404, 200, 503]);
    s.reset();
    expect(await run()).toEqual([503, 404, 404, 200, 503]);
    expect((await call(s, 'POST', '/_sandbox/reset')).status).toBe(200);
    expect(await run()).toEqual([503, 404, 404, 200, 503]);
  });

  it('other-mask: credentials shown as [REDACTED] (username ****); a body holding one of them is refused', async () => {
    const { item } = await withSql(['other-mask']);
    expect(item.config).toMatchObject({ username: '****', password: '[REDACTED]' });
    const put = await call(sb!, 'PUT', `/integrations/${item.id}`, { body: { ...SQL, config: { ...SQL.config, password: '[REDACTED]' } } });
    expect(put.status).toBe(400);
    expect(put.body.message).toMatch(/config\.password/);
  });

  it('lower-hosts: hosts are stored lower-cased (host, the host of a URL), paths keep their case; a PUT with the old spelling changes nothing', async () => {
    sb = await start({ behaviours: ['lower-hosts'], transitionMs: 20 });
    const created = await call(sb, 'POST', '/integrations', { body: { ...SQL, config: { ...SQL.config, host: 'SQLPool.Example.net' } } });
    await settle(sb, created.body.id);
    expect((await call(sb, 'GET', `/integrations/${created.body.id}`)).body.config.host).toBe('sqlpool.example.net');
    const put = await call(sb, 'PUT', `/integrations/${created.body.id}`, { body: { ...SQL, config: { ...SQL.config, host: 'SQLPool.Example.net', port: 1500 } } });
    expect(put.status).toBe(200);
    const hook = await call(sb, 'POST', '/webhooks', { body: { webhooks: [{ ...HOOK, url: 'HTTP://Hooks.Example.COM/In' }] }, token: bearer(sb.adminToken) });
    expect(hook.body.createdWebhooks[0].url).toBe('http://hooks.example.com/In');
  });

  it('list-lag: what was created or updated since the previous list is left out of the next list only; GET by id shows it', async () => {
    sb = await start({ behaviours: ['list-lag'], transitionMs: 20 });
    const created = await call(sb, 'POST', '/integrations', { body: SQL });
    await settle(sb, created.body.id);
    expect((await call(sb, 'GET', '/integrations')).body).toEqual([]);
    expect((await call(sb, 'GET', `/integrations/${created.body.id}`)).status).toBe(200);
    expect((await call(sb, 'GET', '/integrations')).body.map((i: { id: string }) => i.id)).toEqual([created.body.id]);
    await call(sb, 'POST', '/webhooks', { body: { webhooks: [HOOK] }, token: bearer(sb.adminToken) });
    expect((await call(sb, 'GET', '/webhooks', { token: bearer(sb.adminToken) })).body).toEqual([]);
    expect((await call(sb, 'GET', '/webhooks/1', { token: bearer(sb.adminToken) })).status).toBe(200);
    expect((await call(sb, 'GET', '/webhooks', { token: bearer(sb.adminToken) })).body).toHaveLength(1);
  });
});
