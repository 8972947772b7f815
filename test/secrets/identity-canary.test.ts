/**
 * Issue 27: a secret used as an identity field (a host, a workspace URL) must leave no derived form anywhere:
 * the natural key lower-cases it, and the redactor knows only the exact value. govops refuses such references
 * (docs/decisions.md, "Security"), so no output of validate, plan (text and JSON), apply, their logs, the state
 * file or `govops state list|show` holds the value in any case, even after an interrupted create (whose intent
 * records the natural key it would be found by).
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { sqlManifest } from '../apply/inproc.js';
import { lakehouseManifest } from '../helpers/manifests.js';

const secrets = {
  GOVOPS_SECRET_SQL_HOST: 'Canary-Host-Mixed-Q7.example.com',
  GOVOPS_SECRET_LAKE_URL: 'https://Canary-Lake-Mixed-Q8.example.com/',
  GOVOPS_SECRET_SQL_PASSWORD: 'sql-pw-EEEE-6464',
  GOVOPS_SECRET_ADMIN_PASSWORD: 'admin-pw-RRRR-7575',
  GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-QQQQ-4242',
};
const CANARY = /canary-(host|lake)-mixed/i;

describe('a secret in an identity field leaves no derived form in any output', () => {
  let h: Harness;
  let proxy: Server;
  let proxyUrl = '';
  const outputs: string[] = [];
  const run = async (args: string[]) => {
    const r = await h.govops([...args, '--log-level', 'debug'], { ...secrets, GOVOPS_URL: proxyUrl });
    outputs.push(`$ govops ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
    return r;
  };

  beforeAll(async () => {
    h = await harness();
    // In front of the sandbox: every create's connection is dropped unanswered, so an apply that gets that far
    // leaves its intent (with the natural key it would find the create by) pending in the state file.
    proxy = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/integrations') {
        req.socket.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
        void fetch(`${h.sandbox.url}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('sql.yaml', sqlManifest('warehouse', '{ fromEnv: GOVOPS_SECRET_SQL_HOST }'));
    await h.writeManifest(
      'lake.yaml',
      lakehouseManifest({ name: 'lake', host: 'x', httpPath: '/sql/1', tokenEnv: 'GOVOPS_SECRET_LAKE_TOKEN' }).replace(/workspaceUrl: .*/, 'workspaceUrl: { fromEnv: GOVOPS_SECRET_LAKE_URL }'),
    );
  });
  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
    await h.close();
  });

  it('is refused at the reference, and nothing holds the value in any case', async () => {
    const v = await run(['validate', 'manifests']);
    expect(v.code).toBe(1);
    expect(v.stdout + v.stderr).toMatch(/manifests\/sql\.yaml:\d+:\d+: .*`config\.host` is the identity of a sql_analytics integration/);
    expect(v.stdout + v.stderr).toMatch(/manifests\/lake\.yaml:\d+:\d+: .*`config\.workspaceUrl` is the identity of a lakehouse integration/);
    expect((await run(['plan', 'manifests'])).code).not.toBe(0);
    expect((await run(['plan', 'manifests', '-o', 'json'])).code).not.toBe(0);
    expect((await run(['apply', 'manifests', '--timeout', '20s'])).code).not.toBe(0);
    await run(['state', 'list']);
    await run(['state', 'show', 'warehouse']);
    await run(['state', 'show', 'lake']);
    if (existsSync(h.statePath)) outputs.push(await readFile(h.statePath, 'utf8'));
    const all = outputs.join('\n');
    expect(all).not.toMatch(CANARY);
  });
});
