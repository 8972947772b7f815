/** The sandbox's atomic JSON write (--data FILE): the target is replaced whole or not at all, and no temp file stays. */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJson, writeJsonAtomic } from '../../src/sandbox/persist.js';

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
