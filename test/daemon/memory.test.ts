/** Memory tuning is chosen once (when the daemon starts): the collector it returns runs a full collection. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { garbageCollector } from '../../src/daemon/memory.js';

const MEMORY = fileURLToPath(new URL('../../dist/daemon/memory.js', import.meta.url));

/**
 * A fresh process (this one's heap grew long ago) that allocates objects surviving scavenges (what makes V8
 * grow the young generation), then fragments its old space (400,000 promoted objects, one in 50 kept), with
 * either the daemon's collector (the built module) or a plain `gc()` after each step. Reports the young
 * generation's committed size, and the old space's committed and used size after the last collection.
 */
const CHILD = `
import { getHeapSpaceStatistics } from 'node:v8';
const { garbageCollector } = await import(process.argv[1]);
const collect = process.argv[2] === 'plain' ? globalThis.gc : garbageCollector();
const space = (name) => getHeapSpaceStatistics().find((s) => s.space_name === name);
let kept = [];
for (let round = 0; round < 40; round++) {
  const batch = [];
  for (let i = 0; i < 50000; i++) batch.push({ i, s: 'x' + i });
  kept.push(batch);
  if (kept.length > 4) kept = kept.slice(1);
}
const young = space('new_space').space_size;
kept = [];
let all = Array.from({ length: 400000 }, (_, i) => ({ i, s: 'y' + i }));
collect(); collect();
const few = all.filter((_, i) => i % 50 === 0);
all = null;
collect();
const old = space('old_space');
process.stdout.write(JSON.stringify({ young, oldCommitted: old.space_size, oldUsed: old.space_used_size, few: few.length }));
`;

interface Heap {
  young: number;
  oldCommitted: number;
  oldUsed: number;
  few: number;
}

function heapAfterLoad(collector: 'plain' | 'daemon'): Promise<Heap> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, MEMORY, collector], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as Heap) : reject(new Error(`child exited ${code}`))));
  });
}

const MB = 1024 * 1024;

describe('garbageCollector', () => {
  it('returns a full collection to run after each reconcile', () => {
    const gc = garbageCollector();
    const holder: { garbage?: number[][] } = { garbage: Array.from({ length: 200 }, () => Array.from({ length: 20_000 }, (_, i) => i)) };
    const held = process.memoryUsage().heapUsed;
    expect(holder.garbage?.length).toBe(200);
    delete holder.garbage;
    gc();
    expect(process.memoryUsage().heapUsed).toBeLessThan(held - 10 * MB);
  });

  it('keeps the young generation at its initial size and compacts the old space it collects', async () => {
    const [plain, daemon] = await Promise.all([heapAfterLoad('plain'), heapAfterLoad('daemon')]);
    expect(plain.few).toBe(8000);
    expect(daemon.few).toBe(8000);
    // V8's defaults: the young generation doubles up to 32 MB under this load; old pages a few objects keep stay committed
    expect(plain.young).toBeGreaterThan(8 * MB);
    expect(plain.oldCommitted).toBeGreaterThan(plain.oldUsed + 10 * MB);
    // the daemon's: 1 MB semi-spaces (2 MB), and the old space committed close to what it holds
    expect(daemon.young).toBeLessThanOrEqual(4 * MB);
    expect(daemon.oldCommitted).toBeLessThan(daemon.oldUsed + 4 * MB);
  });
});
