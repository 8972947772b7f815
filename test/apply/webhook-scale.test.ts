/**
 * Webhook creation at scale: 10,000 webhooks through `apply` against the sandbox and its request body
 * limit (1 MiB by default), in batches bounded by item count and body size; a service with a smaller
 * limit answers 413 and the batch is split; every batch is reconciled by name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rig, type Rig } from './inproc.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** `count` webhook manifests, `perFile` documents per file. */
async function writeHooks(rg: Rig, count: number, perFile = 500): Promise<void> {
  for (let f = 0; f * perFile < count; f++) {
    const docs: string[] = [];
    for (let i = f * perFile; i < Math.min(count, (f + 1) * perFile); i++) {
      docs.push(
        `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: hook-${i}\nspec:\n  url: https://hooks.example.com/team-${i % 50}/hook-${i}\n  global: false\n  notificationType: [modelCreated, tagCreated, healthCheckFailed]\n  actionType: triggered\n`,
      );
    }
    await rg.write(`hooks-${f}.yaml`, docs.join('---\n'));
  }
}

const posts = (rg: Rig): string[] => rg.lines().filter((l) => l.startsWith('POST /webhooks'));

describe('webhook batches', () => {
  it('10,000 webhooks in one apply: all created once, in batches under the sandbox body limit (no 413); the next plan is empty', async () => {
    r = await rig();
    await writeHooks(r, 10_000);
    const res = await r.run({ timeoutMs: 120_000 });
    expect(res.ok, res.error).toBe(true);
    expect(res.outcomes.filter((o) => o.result === 'ok')).toHaveLength(10_000);
    // 500 per batch (the default item limit; 500 of these are well under 256 KiB)
    expect(posts(r)).toEqual(Array.from({ length: 20 }, () => 'POST /webhooks 200'));
    const live = await r.api.listWebhooks();
    expect(live).toHaveLength(10_000);
    expect(new Set(live.map((w) => w.name)).size).toBe(10_000);
    const state = await r.state();
    expect(state.resources).toHaveLength(10_000);
    expect(state.resources.filter((x) => x.pending !== undefined || x.id === '')).toEqual([]);
    expect(new Set(state.resources.map((x) => x.id))).toEqual(new Set(live.map((w) => w.id)));
    const again = await r.run({ apply: false });
    expect(again.ok, again.error).toBe(true);
    expect(again.changed).toBe(false);
  }, 120_000);

  it('a service with a smaller body limit answers 413: the batch is split and the limit lowered; all created once', async () => {
    r = await rig({ bodyLimit: 16 * 1024 });
    await writeHooks(r, 600, 100);
    const res = await r.run();
    expect(res.ok, res.error).toBe(true);
    const p = posts(r);
    expect(p.filter((l) => l.endsWith(' 413')).length).toBeGreaterThan(0);
    expect(p.filter((l) => l.endsWith(' 200')).length).toBeGreaterThan(1);
    const live = await r.api.listWebhooks();
    expect(live).toHaveLength(600);
    expect(new Set(live.map((w) => w.name)).size).toBe(600);
    expect((await r.state()).resources).toHaveLength(600);
  });

  it('batches respect --webhook-batch-size and --webhook-batch-bytes', async () => {
    r = await rig();
    await writeHooks(r, 250, 250);
    const bySize = await r.run({ webhookBatch: { maxItems: 100 } });
    expect(bySize.ok, bySize.error).toBe(true);
    expect(posts(r)).toHaveLength(3); // 100 + 100 + 50
    await r.close();

    r = await rig({ bodyLimit: 8 * 1024 });
    await writeHooks(r, 250, 250);
    const byBytes = await r.run({ webhookBatch: { maxBytes: 8 * 1024 } });
    expect(byBytes.ok, byBytes.error).toBe(true);
    const p = posts(r);
    expect(p.every((l) => l.endsWith(' 200'))).toBe(true); // never over the limit: no 413
    // each webhook is ~170 bytes of JSON: at most ~48 per 8 KiB batch
    expect(p.length).toBeGreaterThanOrEqual(Math.ceil(250 / 48));
    expect(await r.api.listWebhooks()).toHaveLength(250);
  });
});
