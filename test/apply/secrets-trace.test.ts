/**
 * No secret value anywhere: every stdout/stderr of plan, apply (all outputs, failures, rotation, prune with
 * delete credentials) and scripts, at `--log-level trace`, and the state file. The token neither.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../helpers/cli.js';
import { harness, type Harness } from './harness.js';
import { lakeManifest, sqlManifest, webhookManifest } from './inproc.js';

const V1 = { GOVOPS_SECRET_SQL_PASSWORD: 'sqlpw-V1-k7Hq2', GOVOPS_SECRET_ADMIN_PASSWORD: 'admpw-V1-p9Xz4', GOVOPS_SECRET_LAKE_TOKEN: 'laketok-V1-m3Nb8', GOVOPS_SECRET_HOOK_SECRET: 'hooksec-V1-t6Rc1' };
const V2 = { GOVOPS_SECRET_SQL_PASSWORD: 'sqlpw-V2-a1Sd5', GOVOPS_SECRET_ADMIN_PASSWORD: 'admpw-V2-f4Gh7', GOVOPS_SECRET_LAKE_TOKEN: 'laketok-V2-j2Kl9', GOVOPS_SECRET_HOOK_SECRET: 'hooksec-V2-w8Er3' };

describe('no secret value in any output, trace log or state', () => {
  let h: Harness;
  const results: Array<{ args: string[]; r: CliResult }> = [];
  const run = async (args: string[], secrets: Record<string, string>) => {
    const r = await h.govops([...args, '--log-level', 'trace'], secrets);
    results.push({ args, r });
    return r;
  };
  /** The exit code, failing with the command's error lines when it is not the one expected. */
  const code = async (args: string[], secrets: Record<string, string>, expected: number) => {
    const r = await run(args, secrets);
    expect(r.code, `${args.join(' ')}: ${r.stderr.split('\n').filter((l) => !l.startsWith('{')).join('\n')}`).toBe(expected);
    return r;
  };
  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'm'));
    await h.writeManifest('../m/sql.yaml', sqlManifest('sql', 'db.example.com'));
    await h.writeManifest('../m/manual.yaml', sqlManifest('manual', 'manual.example.com', { autoBootstrap: false, deleteCreds: false }));
    await h.writeManifest('../m/lake.yaml', lakeManifest('lake', 'lake.example.com'));
    await h.writeManifest('../m/hook.yaml', webhookManifest('hook'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('plan, apply, rotation, json/markdown, scripts, a failure and a prune: all succeed or fail as expected', async () => {
    const manual = (ack: string) =>
      h.writeManifest('../m/manual.yaml', sqlManifest('manual', 'manual.example.com', { autoBootstrap: false, deleteCreds: false, annotations: `    ${ack}` }));
    await code(['plan', 'm'], V1, 0);
    // the manual-flow integration waits for its acknowledgment (exit 3), the rest is applied
    await code(['apply', 'm'], V1, 3);
    const created = await code(['scripts', 'manual', '--phase', 'create', 'm'], V1, 0);
    await manual(created.stderr.split('\n').find((l) => l.startsWith('govops/manual-step: '))!);
    await code(['apply', 'm'], V1, 0);
    const rotated = await run(['plan', 'm', '--output', 'json', '--detailed-exitcode'], V2);
    expect(rotated.code).toBe(2);
    expect(JSON.parse(rotated.stdout).summary.update).toBe(3); // sql, manual, lake (the webhook is a replace)
    await code(['plan', 'm', '--output', 'markdown'], V2, 0);
    await code(['apply', 'm', '--output', 'json'], V2, 0); // a rotation alone asks for no script: `manual`'s create acknowledged this configuration
    const edited = await code(['scripts', 'manual', '--phase', 'edit', 'm'], V2, 0);
    await manual((await code(['scripts', 'manual', '--phase', 'edit', 'm', '--ack'], V2, 0)).stdout.trim());
    expect(edited.stderr).toContain((await code(['scripts', 'manual', '--phase', 'edit', 'm', '--ack'], V2, 0)).stdout.trim());
    await code(['apply', 'm', '--output', 'json'], V2, 0);
    await h.writeManifest('../m/bad.yaml', sqlManifest('bad', 'db.invalid'));
    await code(['apply', 'm'], V2, 1);
    await rm(path.join(h.dir, 'm', 'bad.yaml'));
    // deleted with its deleteCredentials (GOVOPS_SECRET_ADMIN_PASSWORD in the DELETE body)
    await h.writeManifest('../m/sql.yaml', sqlManifest('sql', 'db.example.com', { annotations: '    govops/delete: "true"' }));
    const pruned = await run(['apply', 'm', '--prune', '--output', 'json'], V2);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout).outcomes.map((o: { name: string; action: string }) => `${o.name}:${o.action}`)).toContain('sql:delete');
    expect(h.sandbox.requests().some((q) => q.method === 'DELETE' && !q.query.dryRun)).toBe(true);
  });

  it('greps every stdout, stderr (trace logs included) and the state file', async () => {
    const state = await readFile(h.statePath, 'utf8');
    const all = [...results.flatMap(({ r }) => [r.stdout, r.stderr]), state].join('\n');
    expect(results.length).toBeGreaterThanOrEqual(9);
    expect(all).toMatch(/^(trace|debug): /m); // the trace/debug logs really were written
    expect(all).toMatch(/\(sensitive\)/);
    for (const v of [...Object.values(V1), ...Object.values(V2), h.sandbox.adminToken]) expect(all).not.toContain(v);
  });
});
