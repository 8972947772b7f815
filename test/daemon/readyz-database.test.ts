/**
 * /readyz tells anyone why it is not ready in words and codes (`reason`); the error text (hosts, addresses, the
 * server's message) is `detail`, shown only where /status would be. The PostgreSQL state being unreachable is one
 * reason: its error text must follow the same rule. No database here: the state's address refuses connections.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceApi } from '../../src/api/client-types.js';
import { silentLogger } from '../../src/log.js';
import { startRunning } from '../../src/daemon/run.js';
import { closePgPools } from '../../src/state/pg/backend.js';
import { Cleanup, unreachableStateSettings, until } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const TOKEN = 'status-token-readyz-db';

describe('/readyz while the PostgreSQL state is unreachable', () => {
  it('is 503 with a reason in words for anyone; the database error text only with the status token', async () => {
    const home = await cleanup.tmp('govops-readyz-db-');
    const api = { close: async () => undefined } as unknown as ServiceApi;
    const running = await startRunning(
      await unreachableStateSettings(home, { statusToken: TOKEN }),
      silentLogger(),
      () => api,
      () => Promise.reject(new Error('not used')),
    );
    cleanup.add(() => closePgPools());
    cleanup.add(() => running.shutdown(0));
    const url = running.daemon.url;
    const open = await until(async () => {
      const r = await fetch(`${url}/readyz`);
      const body = (await r.json()) as { reason?: string; detail?: string };
      return r.status === 503 && /PostgreSQL/.test(body.reason ?? '') ? body : undefined;
    }, 10_000, 'readyz names the database');
    expect(open).toBeDefined();
    expect(JSON.stringify(open)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    expect(open!.detail).toBeUndefined();
    const shown = (await (await fetch(`${url}/readyz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { detail?: string };
    expect(shown.detail).toMatch(/ECONNREFUSED/);
  });
});
