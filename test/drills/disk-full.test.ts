/**
 * Drill (issue 22, "Writing without a recorded intent"): the state lives on a small tmpfs that fills up while
 * `govops apply` creates 30 integrations and 10 webhooks. No write may be sent whose intent is not on disk: the
 * run stops at the first failed save with GOVOPS_STATE_WRITE_FAILED (exit 1), every live resource is recorded
 * (by id or as a pending create), and no temp file is left behind. Once space is freed, the next apply converges:
 * exactly one resource per manifest, and a plan is a no-op.
 *
 * It needs a real full disk: a tmpfs mounted for the test (root, as CI runs). When it cannot be mounted the test
 * FAILS, it does not skip.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { liveNaturalKey } from '../../src/kinds/registry.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { loadState } from '../../src/state/store.js';
import { sqlManifest, webhookManifest } from '../apply/inproc.js';
import { runGovops } from '../helpers/cli.js';

const SECRETS = { GOVOPS_SECRET_SQL_PASSWORD: 'pw-disk-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-disk-2', GOVOPS_SECRET_HOOK_SECRET: 'hook-disk-3' };
const INTEGRATIONS = 30;
const WEBHOOKS = 10;
/** tmpfs size, and the space left free once the filler is written (a few saves fit, then the disk is full). */
const TMPFS_KB = 512;
const FREE_KB = 24;

let sandbox: SandboxHandle | undefined;
let dir: string | undefined;
let mounted: string | undefined;
afterEach(async () => {
  if (mounted) execFileSync('umount', [mounted]);
  mounted = undefined;
  await sandbox?.close();
  sandbox = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

function mountTmpfs(at: string): void {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_KB}k,mode=0700`, 'tmpfs', at], { stdio: 'pipe' });
  } catch (err) {
    throw new Error(
      `the disk-full drill needs a tmpfs it can fill (run as root, as CI does): mount failed: ${(err as { stderr?: Buffer }).stderr?.toString() ?? String(err)}`,
      { cause: err },
    );
  }
  mounted = at;
}

describe('drill: the state disk fills up during an apply', () => {
  it('stops at the first failed save (GOVOPS_STATE_WRITE_FAILED): nothing live is unrecorded, no temp file left; then converges', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 30 });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-disk-full-'));
    const m = path.join(dir, 'm');
    await mkdir(m);
    for (let i = 0; i < INTEGRATIONS; i++) await writeFile(path.join(m, `sql-${i}.yaml`), sqlManifest(`sql-${i}`, `db-${i}.example.com`));
    for (let i = 0; i < WEBHOOKS; i++) await writeFile(path.join(m, `wh-${i}.yaml`), webhookManifest(`wx-wh-${i}`));
    const disk = path.join(dir, 'disk');
    await mkdir(disk);
    mountTmpfs(disk);
    const filler = path.join(disk, 'filler');
    await writeFile(filler, Buffer.alloc((TMPFS_KB - FREE_KB) * 1024));
    const statePath = path.join(disk, 'state.json');
    const env = { ...SECRETS, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const apply = (): ReturnType<typeof runGovops> => runGovops(['apply', 'm', '--state', statePath, '--output', 'json'], { cwd: dir, env });

    const full = await apply();
    expect(full.code, full.stderr).toBe(1);
    expect(full.stdout + full.stderr).toContain('GOVOPS_STATE_WRITE_FAILED');
    const writesAfterFull = sandbox.requests().filter((r) => r.method === 'POST' && r.query.dryRun !== 'true');
    // the drill is only worth its name when the disk filled up part way: some creates went out, not all
    expect(writesAfterFull.length).toBeGreaterThan(0);

    // Nothing unrecorded: every live resource has its id in the state on disk, or a pending create of its identity.
    const state = await loadState(statePath);
    const client = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger() });
    try {
      const [ints, hooks] = await Promise.all([client.listIntegrations(), client.listWebhooks()]);
      expect(ints.length).toBeLessThan(INTEGRATIONS); // it stopped part way
      const ids = new Set(state.resources.filter((r) => r.id !== '').map((r) => `${r.kind}/${r.id}`));
      const pending = new Set(state.resources.filter((r) => r.pending === 'create').map((r) => `${r.kind}/${r.key ?? ''}`));
      const unrecorded = [
        ...ints.filter((i) => !ids.has(`Integration/${i.id}`) && !pending.has(`Integration/${liveNaturalKey(i.type, i.config)}`)).map((i) => `Integration ${i.id}`),
        ...hooks.filter((w) => !ids.has(`Webhook/${w.id}`) && !pending.has(`Webhook/${w.name}`)).map((w) => `Webhook ${w.name}`),
      ];
      expect(unrecorded).toEqual([]);
      // no temp file (empty or partial) left behind by the failed saves
      const left = (await readdir(disk)).filter((f) => f !== 'filler');
      expect(left.filter((f) => f.endsWith('.tmp'))).toEqual([]);
      for (const f of left) expect((await stat(path.join(disk, f))).size, f).toBeGreaterThan(0);

      // Space again: the next apply resolves the pending intents and converges.
      await rm(filler);
      const again = await apply();
      expect(again.code, again.stderr).toBe(0);
      const [ints2, hooks2] = await Promise.all([client.listIntegrations(), client.listWebhooks()]);
      expect(ints2).toHaveLength(INTEGRATIONS);
      expect(new Set(ints2.map((i) => liveNaturalKey(i.type, i.config))).size).toBe(INTEGRATIONS);
      expect(hooks2.map((w) => w.name).sort()).toEqual(Array.from({ length: WEBHOOKS }, (_, i) => `wx-wh-${i}`).sort());
      const plan = await runGovops(['plan', 'm', '--state', statePath, '--detailed-exitcode'], { cwd: dir, env });
      expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    } finally {
      await client.close();
    }
  }, 120_000);
});
