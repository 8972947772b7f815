/** Authentication (interface part 5) and the HTTP shell: 401/403, schemes, tokens file, 404/405/413/415. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_ADMIN_TOKEN, DEV_USER_TOKEN, type SandboxHandle } from '../../src/sandbox/index.js';
import { bearer, bodyFor, call, start } from './harness.js';

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await start({ bodyLimit: 10_000 });
});
afterAll(async () => {
  await sb.close();
});

describe('integration endpoints', () => {
  it('401 without a token', async () => {
    const r = await call(sb, 'GET', '/integrations', { token: null });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
  });

  it('401 for an unknown token', async () => {
    expect((await call(sb, 'GET', '/integrations', { token: 'nope' })).status).toBe(401);
  });

  it('the raw Authorization value is the token: "Bearer <admin>" is not accepted', async () => {
    expect((await call(sb, 'GET', '/integrations', { token: bearer(sb.adminToken) })).status).toBe(401);
    expect((await call(sb, 'GET', '/integrations', { token: sb.adminToken })).status).toBe(200);
  });

  it('403 for a known user without APPLICATION_ADMIN, on every integration endpoint', async () => {
    for (const [m, p] of [
      ['GET', '/integrations'],
      ['POST', '/integrations'],
      ['GET', '/integrations/1'],
      ['PUT', '/integrations/1'],
      ['DELETE', '/integrations/1'],
      ['GET', '/integrations/1/status'],
      ['POST', '/integrations/scripts/create'],
      ['POST', '/integrations/scripts/initial-create'],
      ['POST', '/integrations/scripts/cleanup'],
      ['POST', '/integrations/scripts/post-cleanup'],
      ['POST', '/integrations/1/scripts/edit'],
      ['POST', '/integrations/1/scripts/delete'],
    ] as const) {
      const r = await call(sb, m, p, { token: sb.userToken, body: m === 'POST' || m === 'PUT' ? bodyFor('sql_analytics') : undefined });
      expect(r.status, `${m} ${p}`).toBe(403);
      expect(r.body).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    }
  });
});

describe('every service endpoint, later ones included (data sources, webhook history and retry)', () => {
  const integration = ['GET /integrations', 'POST /integrations', 'GET /integrations/1', 'PUT /integrations/1', 'DELETE /integrations/1',
    'GET /integrations/1/status', 'POST /integrations/scripts/create', 'POST /integrations/scripts/initial-create',
    'POST /integrations/scripts/cleanup', 'POST /integrations/scripts/post-cleanup', 'POST /integrations/1/scripts/edit',
    'POST /integrations/1/scripts/delete', 'POST /native-s3/handler', 'GET /native-s3/handler', 'GET /native-s3/handler/1', 'DELETE /dataSource/1'];
  const webhook = ['POST /webhooks', 'GET /webhooks', 'GET /webhooks/actions', 'GET /webhooks/history', 'POST /webhooks/history/retry/1',
    'GET /webhooks/1', 'DELETE /webhooks/1'];
  const statuses = async (endpoint: string, tokens: Array<string | null>): Promise<number[]> => {
    const [m, p] = endpoint.split(' ') as [string, string];
    const out: number[] = [];
    for (const token of tokens) out.push((await call(sb, m, p, { token, body: m === 'POST' || m === 'PUT' ? {} : undefined })).status);
    return out;
  };
  it('integration scheme (5.1, 5.2): no token or a Bearer one 401, a user 403', async () => {
    for (const e of integration) expect(await statuses(e, [null, bearer(sb.adminToken), sb.userToken]), e).toEqual([401, 401, 403]);
  });
  it('webhook scheme (5.1): no token, a raw one or an unknown Bearer one 401', async () => {
    for (const e of webhook) expect(await statuses(e, [null, sb.adminToken, bearer('nope')]), e).toEqual([401, 401, 401]);
  });
});

describe('webhook endpoints', () => {
  it('need "Bearer <token>": raw token is 401, bearer works for users and admins', async () => {
    expect((await call(sb, 'GET', '/webhooks', { token: sb.userToken })).status).toBe(401);
    expect((await call(sb, 'GET', '/webhooks', { token: null })).status).toBe(401);
    expect((await call(sb, 'GET', '/webhooks', { token: bearer('unknown') })).status).toBe(401);
    expect((await call(sb, 'GET', '/webhooks', { token: bearer(sb.userToken) })).status).toBe(200);
    expect((await call(sb, 'GET', '/webhooks/actions', { token: bearer(sb.adminToken) })).status).toBe(200);
  });
});

describe('control API needs the admin token (unless --dev)', () => {
  it('GET /_sandbox/health: 401 without a token or with an unknown one, 403 for a user, 200 for the admin raw or as Bearer', async () => {
    expect((await call(sb, 'GET', '/_sandbox/health', { token: null })).status).toBe(401);
    expect((await call(sb, 'GET', '/_sandbox/health', { token: 'nope' })).status).toBe(401);
    expect((await call(sb, 'GET', '/_sandbox/health', { token: bearer(sb.userToken) })).status).toBe(403);
    expect((await call(sb, 'POST', '/_sandbox/reset', { token: null })).status).toBe(401);
    expect(sb.integrations.size).toBeGreaterThanOrEqual(0);
    const raw = await call(sb, 'GET', '/_sandbox/health', { token: sb.adminToken });
    expect(raw.status).toBe(200);
    expect(raw.body.status).toBe('ok');
    expect((await call(sb, 'GET', '/_sandbox/health', { token: bearer(sb.adminToken) })).status).toBe(200);
  });
});

describe('HTTP shell', () => {
  it('404 error body for unknown routes', async () => {
    const r = await call(sb, 'GET', '/nothing/here');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it('405 with Allow for a known path and wrong method', async () => {
    const r = await call(sb, 'PATCH', '/integrations');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toContain('GET');
    expect(r.body).toMatchObject({ statusCode: 405, error: 'Method Not Allowed' });
  });

  it('413 for bodies over the limit', async () => {
    const r = await call(sb, 'POST', '/integrations', { raw: JSON.stringify({ pad: 'x'.repeat(20_000) }) });
    expect(r.status).toBe(413);
    expect(r.body.statusCode).toBe(413);
  });

  it('415 for YAML bodies on webhook endpoints (YAML is for integrations only)', async () => {
    const r = await call(sb, 'POST', '/webhooks', { token: bearer(sb.adminToken), raw: 'webhooks: []', contentType: 'application/yaml' });
    expect(r.status).toBe(415);
  });

  it('400 for malformed YAML', async () => {
    const r = await call(sb, 'POST', '/integrations', { raw: 'type: [unclosed', contentType: 'application/yaml' });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/YAML/);
  });
});

describe('token configuration', () => {
  it('uses given tokens, generates otherwise, fixed dev tokens with dev', async () => {
    const given = await start({ adminToken: 'a-tok', userToken: 'u-tok' });
    expect(given.adminToken).toBe('a-tok');
    expect(given.tokensGenerated).toBe(false);
    expect((await call(given, 'GET', '/integrations', { token: 'a-tok' })).status).toBe(200);
    expect((await call(given, 'GET', '/integrations', { token: 'u-tok' })).status).toBe(403);
    await given.close();
    const gen = await start();
    expect(gen.tokensGenerated).toBe(true);
    expect(gen.adminToken.length).toBeGreaterThanOrEqual(24);
    expect(gen.adminToken).not.toBe(DEV_ADMIN_TOKEN);
    await gen.close();
    const dev = await start({ dev: true });
    expect([dev.adminToken, dev.userToken]).toEqual([DEV_ADMIN_TOKEN, DEV_USER_TOKEN]);
    await dev.close();
  });

  it('reads a tokens file with roles and user ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-tokens-'));
    const file = join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify([
        { token: 'file-admin', role: 'admin', userId: 7, name: 'alice' },
        { token: 'file-user', role: 'user', userId: 8, name: 'bob' },
        { token: 'file-user2', role: 'user', userId: 9, name: 'carol' },
      ]),
    );
    const s = await start({ tokensFile: file });
    try {
      expect(s.adminToken).toBe('file-admin');
      expect((await call(s, 'GET', '/integrations', { token: 'file-admin' })).status).toBe(200);
      expect((await call(s, 'GET', '/integrations', { token: 'file-user2' })).status).toBe(403);
      expect((await call(s, 'GET', '/webhooks', { token: bearer('file-user2') })).status).toBe(200);
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
