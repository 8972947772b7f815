/**
 * `--listen :PORT` (the default `:8080`, the Kubernetes example's `--listen=:8080`) is "every interface": IPv6 too.
 * A pod in an IPv6 (or IPv6-first dual-stack) cluster is probed on its IPv6 address; a daemon bound to 0.0.0.0 only
 * refused those probes, and the kubelet restarted a healthy pod for ever.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cleanup, closedPort, spawnRun } from './helpers.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Whether this machine has an IPv6 loopback address to test with. */
const ipv6 = await new Promise<boolean>((done) => {
  const s = createServer();
  s.once('error', () => done(false));
  s.listen(0, '::1', () => s.close(() => done(true)));
});

function status(url: string): Promise<number | string> {
  return new Promise((done) => {
    const req = request(url, { timeout: 5000 }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    req.end();
  });
}

describe.skipIf(!ipv6)('govops run --listen :PORT', () => {
  it('answers /healthz on the IPv6 loopback address as well as on 127.0.0.1', async () => {
    const home = mkdtempSync(join(tmpdir(), 'govops-listen-'));
    const d = spawnRun(cleanup, ['--dir', home, '--state', join(home, '.govops', 'state.json'), '--listen', ':0'], {
      cwd: home,
      env: { GOVOPS_URL: `http://127.0.0.1:${await closedPort()}`, GOVOPS_TOKEN: 't' },
    });
    const url = await d.url;
    const port = new URL(url).port;
    expect(await status(`http://127.0.0.1:${port}/healthz`)).toBe(200);
    expect(await status(`http://[::1]:${port}/healthz`), d.out()).toBe(200);
  });
});
