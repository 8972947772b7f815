/** The sandbox's atomic JSON write (--data FILE): the target is replaced whole or not at all, and no temp file stays. */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJson, writeJsonAtomic } from '../../src/sandbox/persist.js';
import { Persister } from '../../src/sandbox/persistence.js';
import { silentLogger } from '../../src/log.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('writeJsonAtomic', () => {
  it('a write that fails before the rename leaves the old file as it was and no temp file behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-persist-'));
    dirs.push(dir);
    const file = join(dir, 'state.json');
    writeFileSync(file, '{"version":1}');
    // A value JSON cannot hold stands for any failure between creating the temp file and the rename (ENOSPC, EIO).
    for (let i = 0; i < 3; i++) await expect(writeJsonAtomic(file, { big: 1n })).rejects.toThrow(/BigInt/);
    expect(readdirSync(dir)).toEqual(['state.json']);
    expect(readFileSync(file, 'utf8')).toBe('{"version":1}');
    await writeJsonAtomic(file, { version: 1, n: 2 });
    expect(readdirSync(dir)).toEqual(['state.json']);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, n: 2 });
  });
});

describe('readJson', () => {
  it('a data file that cannot be read is an error naming it (a folder given as --data)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-persist-'));
    dirs.push(dir);
    await expect(readJson(dir)).rejects.toThrow(`sandbox data file ${dir} cannot be read`);
    await expect(readJson(join(dir, 'absent.json'))).resolves.toBeUndefined();
  });
});

describe('Persister', () => {
  it('saves asked for while one is being written are one write of the latest state, not a queue of them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'govops-sandbox-persist-'));
    dirs.push(dir);
    const file = join(dir, 'state.json');
    let snapshots = 0;
    let n = 0;
    const p = new Persister(file, () => (snapshots++, { version: 1, savedAt: '', integrations: null, webhooks: null, n }), silentLogger());
    p.arm();
    // A large state takes long to write; changes meanwhile ask for more saves (the debounce fires every 100 ms).
    const saves: Array<Promise<void>> = [];
    for (n = 1; n <= 20; n++) saves.push(p.flush());
    await Promise.all(saves);
    expect(snapshots).toBeLessThanOrEqual(2);
    expect(JSON.parse(readFileSync(file, 'utf8')).n).toBe(21); // the last state (n after the loop)
  });
});
