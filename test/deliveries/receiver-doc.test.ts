/**
 * The Node receiver of docs/webhooks.md, run exactly as written (extracted from the page) against real
 * deliveries from the sandbox: a signed delivery is accepted (2xx in the history), a delivery signed
 * with another secret, a tampered body and an unsigned request are rejected (401).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../daemon/helpers.js';
import { startWorld, type World } from './world.js';

let w: World | undefined;
let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  child?.kill();
  await w?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function receiverCode(): Promise<string> {
  const page = await readFile(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const m = /<!-- receiver-example:start -->\s*```js\n([\s\S]*?)```\s*<!-- receiver-example:end -->/.exec(page);
  if (!m) throw new Error('docs/webhooks.md: receiver example markers not found');
  return m[1]!;
}

describe('docs/webhooks.md receiver example', () => {
  it('verifies real sandbox deliveries with HMAC-SHA1 and rejects forgeries', async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-receiver-'));
    const file = join(dir, 'receiver.mjs');
    await writeFile(file, await receiverCode());
    const secret = 'receiver-doc-secret';
    child = spawn(process.execPath, [file], { env: { ...process.env, WEBHOOK_SECRET: secret, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const port = await until(() => /listening on port (\d+)/.exec(out)?.[1], 15_000, 'receiver listening');
    const url = `http://127.0.0.1:${port}/hook`;

    w = await startWorld();
    const item = (name: string, s: string) => ({ url, name, global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered', secret: s });
    await w.createHooks([item('docs-good', secret), item('docs-wrong-secret', 'not-the-secret')]);
    await w.fire('modelAccessRequested', { metadata: { modelId: 12, projectName: 'sales' } });

    const page = await w.call('GET', '/webhooks/history');
    const byName = Object.fromEntries(page.records.map((r: any) => [r.name, r]));
    expect(byName['docs-good']).toMatchObject({ statusCode: 204, response: {} });
    expect(byName['docs-wrong-secret']).toMatchObject({ statusCode: 401 });
    await until(() => out.includes('received modelAccessRequested for webhook docs-good'), 5000, 'handler ran');
    expect(out).toContain('rejected: bad or missing signature');

    // a captured body altered in transit, and a request without a signature
    const body = JSON.stringify(byName['docs-good'].request);
    const signature = `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;
    const post = (b: string, headers: Record<string, string>) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b });
    expect((await post(body, { 'x-webhook-signature': signature })).status).toBe(204);
    expect((await post(body.replace('sales', 'SALES'), { 'x-webhook-signature': signature })).status).toBe(401);
    expect((await post(body, {})).status).toBe(401);
    expect((await post(body, { 'x-webhook-signature': 'sha1=00' })).status).toBe(401);
  });
});
