/**
 * The write gate (a daemon replica that may no longer lead sends nothing) is asked when a write is queued and
 * again when it is written to a connection: a write that waited in the pool's queue while the gate closed
 * never reaches the service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { ErrorCode, UserError } from '../../src/errors.js';
import { latch } from '../helpers/latch.js';
import { sendJson, startServer, type TestServer } from './server.js';

let server: TestServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = server = undefined;
});

describe('write gate', () => {
  it('a write queued behind a busy connection is checked again when it leaves: refused unsent once the gate closed', async () => {
    const released = latch();
    const listStarted = latch();
    server = await startServer(async (req, res) => {
      if (req.method === 'GET') {
        listStarted.open();
        await released.reached;
        sendJson(res, 200, []);
        return;
      }
      sendJson(res, 200, { id: 7, status: 'deleting' });
    });
    let open = true;
    const asked: string[] = [];
    client = new ServiceClient({
      baseUrl: server.url,
      token: 't',
      connections: 1,
      retries: 3,
      writeGate: (method, path) => {
        asked.push(`${method} ${path}`);
        if (!open) throw new UserError(`${method} ${path} not sent: no lease`, undefined, { code: ErrorCode.stateFenced });
      },
    });
    const list = client.listIntegrations();
    await listStarted.reached; // the only connection is busy: the next request waits in the pool's queue
    const write = client.deleteIntegration('7', undefined);
    const writeFailed = write.then(() => undefined, (err: unknown) => err);
    open = false; // the lease is lost while the write waits
    released.open();
    await list;
    const err = await writeFailed;
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).code).toBe(ErrorCode.stateFenced);
    // asked twice (queued, then at the connection), never retried, and the service saw no DELETE
    expect(asked).toEqual(['DELETE /integrations/7', 'DELETE /integrations/7']);
    expect(server.seen.map((r) => r.method)).toEqual(['GET']);
  });

  it('an open gate lets the write through; reads and dry runs never ask it', async () => {
    server = await startServer((req, res) => sendJson(res, 200, req.method === 'GET' ? [] : { id: 7, status: 'deleting' }));
    const asked: string[] = [];
    client = new ServiceClient({ baseUrl: server.url, token: 't', writeGate: (m, p) => void asked.push(`${m} ${p}`) });
    await client.listIntegrations();
    await client.deleteIntegration('7', undefined, { dryRun: true });
    await client.deleteIntegration('7', undefined);
    expect(asked).toEqual(['DELETE /integrations/7', 'DELETE /integrations/7']);
    expect(server.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /integrations', 'DELETE /integrations/7?dryRun=true', 'DELETE /integrations/7']);
  });
});
