/** ServiceClient against the real sandbox over HTTP: the happy paths, auth schemes, faults. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { ApiError } from '../../src/errors.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

let sb: SandboxHandle;
let client: ServiceClient;
beforeAll(async () => {
  sb = await startSandbox({ port: 0, transitionMs: 50, dev: true });
  client = new ServiceClient({ baseUrl: sb.url, token: sb.adminToken, retryPolicy: { baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 10 } });
});
afterAll(async () => {
  await client.close();
  await sb.close();
});
beforeEach(() => sb.reset());

const PASSWORD = 'pw-sandbox-secret';
const body = {
  type: 'sql_analytics' as const,
  autoBootstrap: false,
  config: { host: 'sql.example.com', database: 'gov', schema: 'views', username: 'svc', password: PASSWORD },
};

async function settle(id: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const s = await client.getIntegrationStatus(id);
    if (!['creating', 'editing', 'deleting'].includes(s.status)) return s.status;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('did not settle');
}

describe('ServiceClient against the sandbox', () => {
  it('dry run, create, status, get, update, delete an integration', async () => {
    const dry = await client.createIntegration(body, { dryRun: true });
    expect(dry.validationResults.validationTests.length).toBeGreaterThan(0);
    expect(await client.listIntegrations()).toEqual([]);

    const created = await client.createIntegration(body);
    expect(typeof created.id).toBe('string');
    expect(created.status).toBe('creating');
    expect(await settle(created.id)).toBe('enabled');
    const status = await client.getIntegrationStatus(created.id);
    expect(status).toEqual({ id: created.id, status: 'enabled' });

    const live = await client.getIntegration(created.id);
    expect(live.type).toBe('sql_analytics');
    expect(live.config.host).toBe('sql.example.com');
    expect(JSON.stringify(live)).not.toContain(PASSWORD);

    const updated = await client.updateIntegration(created.id, { ...body, config: { ...body.config, port: 1444 } });
    expect(updated.status).toBe('editing');
    expect(await settle(created.id)).toBe('enabled');
    expect((await client.getIntegration(created.id)).config.port).toBe(1444);

    await client.deleteIntegration(created.id, undefined);
    const gone = await (async () => {
      for (let i = 0; i < 200; i++) {
        const e = await client.getIntegrationStatus(created.id).catch((err: unknown) => err);
        if (e instanceof ApiError) return e;
        await new Promise((r) => setTimeout(r, 10));
      }
      return undefined;
    })();
    expect(gone?.statusCode).toBe(404);
  });

  it('sends the raw token to integrations and Bearer to webhooks (the sandbox rejects the wrong scheme)', async () => {
    await client.listIntegrations();
    await client.listWebhooks();
    const auths = sb.requests().map((r) => [r.path, r.status]);
    expect(auths).toEqual([
      ['/integrations', 200],
      ['/webhooks', 200],
    ]);
  });

  it('creates, lists, gets and deletes webhooks with string ids', async () => {
    const res = await client.createWebhooks([
      { url: 'http://127.0.0.1:9/a', name: 'hook-a', global: false, notificationType: ['userCreated'], actionType: 'triggered' },
      { url: 'http://127.0.0.1:9/b', name: 'hook-b', global: false, notificationType: ['userCreated'], actionType: 'triggered', secret: 's' },
    ]);
    expect(res.errors).toEqual([]);
    expect(res.createdWebhooks.map((w) => w.name)).toEqual(['hook-a', 'hook-b']);
    const id = res.createdWebhooks[0]!.id;
    expect(typeof id).toBe('string');
    expect((await client.getWebhook(id)).name).toBe('hook-a');
    expect((await client.listWebhooks()).map((w) => w.id)).toContain(id);
    await client.deleteWebhook(id);
    expect((await client.listWebhooks()).map((w) => w.name)).toEqual(['hook-b']);
  });

  it('fetches a setup script', async () => {
    const script = await client.generateScript('create', { body });
    expect(typeof script).toBe('string');
    expect(script.length).toBeGreaterThan(0);
    expect(script).not.toContain(PASSWORD);
  });

  it('retries injected 503s and a dropped create, never duplicating the integration', async () => {
    sb.faults.add({ type: 'error', status: 503, method: 'GET', path: '/integrations', count: 2 });
    expect(await client.listIntegrations()).toEqual([]);
    sb.faults.add({ type: 'drop', method: 'POST', path: '/integrations', count: 1 });
    const created = await client.createIntegration(body);
    const all = await client.listIntegrations();
    expect(all.map((i) => i.id)).toEqual([created.id]);
    // the dropped POST was followed by a lookup before the second POST
    const seq = sb.requests().map((r) => `${r.method} ${r.path}`);
    const firstPost = seq.indexOf('POST /integrations');
    expect(seq.slice(firstPost, firstPost + 3)).toEqual(['POST /integrations', 'GET /integrations', 'POST /integrations']);
  });
});
