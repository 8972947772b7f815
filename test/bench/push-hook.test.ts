/**
 * bench/latency.bench.mjs sends a signed push notification per round: each must be a delivery the daemon acts on
 * (202), not a replay of the round before (200, no fetch), or the bench stops after its first round.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { signedPush } from '../../bench/push-hook.mjs';
import { silentLogger } from '../../src/log.js';
import { startHttpServer, type HttpServerHandle } from '../../src/daemon/server.js';

const SECRET = 'bench-secret';
let http: HttpServerHandle | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

describe("the latency bench's push notifications", () => {
  it('are each acted on: one fetch per round', async () => {
    let pushes = 0;
    http = await startHttpServer(
      { host: '127.0.0.1', port: 0 },
      { ready: () => ({ ready: true }), status: () => ({}), registry: new Registry(), hookSecret: SECRET, onPush: () => (pushes++, true) },
      silentLogger(),
    );
    for (let round = 1; round <= 3; round++) {
      const { body, headers } = signedPush(SECRET, { after: `${round}`.repeat(40) });
      const res = await fetch(`${http.url}/hooks/git`, { method: 'POST', body, headers });
      expect(res.status, await res.text()).toBe(202);
    }
    expect(pushes).toBe(3);
  });
});
