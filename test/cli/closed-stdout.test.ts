/**
 * A reader that stops early (`govops apply manifests | head`, a log collector that goes away): the rest of the output
 * is dropped and the command runs to its end with its own exit code. Before, the first write after the reader left
 * failed with EPIPE, an `error` event nothing listened to: the process printed `error: write EPIPE` and exited 1 at
 * once, an apply in the middle of its work (integrations created but not polled, their data sources never registered).
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { CLI, type CliResult } from '../helpers/cli.js';
import { dataSourceManifest, objectStoreManifest } from '../helpers/manifests.js';

let h: Harness;

beforeAll(async () => {
  // long enough that the apply is still polling when its first lines have been read
  h = await harness({ transitionMs: 1500 });
  await mkdir(path.join(h.dir, 'manifests'));
});
afterAll(async () => {
  await h.close();
});

/** Run govops with the harness' environment; `closeOn` closes the read end of the named stream at its first output. */
function runClosing(args: string[], closeOn: 'stdout' | 'stderr'): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: h.dir,
      env: { ...process.env, NO_COLOR: '1', GOVOPS_LOG_LEVEL: '', ...h.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '' };
    for (const name of ['stdout', 'stderr'] as const) {
      const stream = child[name];
      stream.on('data', (d: Buffer) => {
        out[name] += d.toString();
        if (name === closeOn) stream.destroy(); // as `head -1` does once it has its line
      });
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ...out });
    });
  });
}

describe('output whose reader stopped early', () => {
  it('apply | head: the apply finishes (data sources registered, state saved) and exits 0, without an EPIPE error', async () => {
    await h.writeManifest('store.yaml', objectStoreManifest('pipe-store', 's3://pipe-bucket/base'));
    await h.writeManifest('ds.yaml', dataSourceManifest('pipe-events', 'pipe-store', 's3://pipe-bucket/base/events'));
    const r = await runClosing(['apply', 'manifests'], 'stdout');
    expect(r.stderr).not.toMatch(/EPIPE/);
    expect(r.code).toBe(0);
    const client = h.client();
    expect((await client.listDataSources()).map((d) => d.prefix)).toEqual(['s3://pipe-bucket/base/events']);
    const state = await h.state();
    expect(state.resources.map((x) => `${x.kind}/${x.name}`).sort()).toEqual(['DataSource/pipe-events', 'Integration/pipe-store']);
  });

  it('apply -o json with stderr closed: the progress lines are dropped, the JSON result is whole, exit 0', async () => {
    await h.writeManifest('store2.yaml', objectStoreManifest('pipe-store-2', 's3://pipe-bucket-2/base'));
    await h.writeManifest('ds2.yaml', dataSourceManifest('pipe-events-2', 'pipe-store-2', 's3://pipe-bucket-2/base/events'));
    const r = await runClosing(['apply', 'manifests', '-o', 'json'], 'stderr');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { ok: boolean; outcomes: Array<{ name: string; result: string }> };
    expect(result.ok).toBe(true);
    expect(result.outcomes.filter((o) => o.result === 'ok').map((o) => o.name).sort()).toEqual(['pipe-events-2', 'pipe-store-2']);
  });
});
