/**
 * `govops state list|show|forget|adopt|migrate` as an operator meets them: the real CLI on real state files (the
 * PostgreSQL backend's cases are in test/postgres/state.test.ts, the sandbox flows in test/operator/controls.test.ts).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newState, saveState } from '../../src/state/store.js';
import type { ManagedResource } from '../../src/state/types.js';
import { CLI, type CliResult } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) {
    await chmod(d, 0o755).catch(() => undefined);
    await rm(d, { recursive: true, force: true });
  }
});

async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'govops-state-cli-'));
  dirs.push(d);
  return d;
}

function entry(name: string, extra: Partial<ManagedResource> = {}): ManagedResource {
  return { kind: 'Integration', name, id: '7', type: 'lakehouse', origin: 'created', specHash: 'h', secretFingerprints: {}, updatedAt: new Date(0).toISOString(), ...extra };
}

/** The CLI as a user who cannot write `dir` (as root: as nobody, who root's permissions do not cover). */
function asReader(args: string[], cwd: string): Promise<CliResult> {
  const root = process.getuid?.() === 0;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, ...(root ? { uid: 65534, gid: 65534 } : {}) }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the state lock where the state folder cannot be written', () => {
  it('is an error naming the state and its folder, with what to do; not a bare EACCES on a temporary file', async () => {
    const home = await tmp();
    await chmod(home, 0o755);
    const ro = path.join(home, 'ro');
    await mkdir(ro);
    const file = path.join(ro, 'state.json');
    await saveState(file, { ...newState(), resources: [entry('lake')] });
    await chmod(file, 0o644);
    await chmod(ro, 0o555);
    const res = await asReader(['state', 'list', '--state', file], home);
    expect(res.code).toBe(1);
    // the old code: "error: EACCES: permission denied, open '.../state.json.lock.1234.0a1b2c3d.tmp'"
    expect(res.stderr).not.toMatch(/\.tmp'/);
    expect(res.stderr).toContain(`cannot take the lock of the govops state ${file}`);
    expect(res.stderr).toContain(ro);
    expect(res.stderr).toMatch(/hint: .*--state/);
  });
});

