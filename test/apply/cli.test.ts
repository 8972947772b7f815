import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, requestsBeyondLists, type Harness } from './harness.js';
import { lakeManifest, webhookManifest } from './inproc.js';

describe('govops plan / apply command line', () => {
  let h: Harness;
  const secrets = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-ZZZZ-9999', GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-YYYY-8888' };
  const outputs: string[] = [];
  const run = async (args: string[]) => {
    const r = await h.govops(args, secrets);
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com'));
    await h.writeManifest('hook.yaml', webhookManifest('hook'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('apply --output json prints one document with plan and outcomes; exit 0', async () => {
    const r = await run(['apply', 'manifests', '--output', 'json', '--concurrency', '2', '--timeout', '30s']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ formatVersion: 2, ok: true, stage: 'done' });
    expect(doc.plan.summary).toMatchObject({ create: 2 });
    expect(doc.outcomes.map((o: { name: string; result: string }) => `${o.name}:${o.result}`).sort()).toEqual(['hook:ok', 'lake:ok']);
  });

  it('plan --detailed-exitcode: 0 without changes, 2 with changes', async () => {
    expect((await run(['plan', 'manifests', '--detailed-exitcode'])).code).toBe(0);
    await h.writeManifest('hook.yaml', webhookManifest('hook', ['modelCreated', 'modelDeleted']));
    const r = await run(['plan', 'manifests', '--detailed-exitcode']);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/-\/\+ Webhook\/hook/);
    expect((await run(['plan', 'manifests'])).code).toBe(0);
  });

  it('--max-deletes refuses the deletes and replaces over it (exit 1), naming the flag that allows them; nothing is written', async () => {
    await rm(path.join(h.dir, 'manifests', 'lake.yaml'));
    h.sandbox.clearRequests();
    const r = await run(['apply', 'manifests', '--prune', '--max-deletes', '1']);
    expect(r.code).toBe(1);
    expect(r.stdout, r.stderr).toMatch(/Warning: the plan deletes or replaces 2 resources, more than --max-deletes 1: .*run with --max-deletes 2/);
    expect(r.stderr).toMatch(/^error: .*--max-deletes 1/m);
    expect(requestLines(h.sandbox).sort()).toEqual(['GET /integrations', 'GET /webhooks']);
  });

  it('apply --prune with the markdown output: table of outcomes', async () => {
    const r = await run(['apply', 'manifests', '--prune', '--output', 'markdown']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/### govops apply/);
    expect(r.stdout).toMatch(/\| Integration\/lake \| delete \| ok \|/);
    expect(r.stdout).toMatch(/\| Webhook\/hook \| replace \| ok \|/);
    expect(await h.client().listIntegrations()).toEqual([]);
  });

  it('an invalid manifest: file:line:col on stderr, exit 1, no request but the lists', async () => {
    await h.writeManifest('bad.yaml', 'apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: bad\nspec:\n  type: lakehouse\n  autoBootstrap: true\n  config:\n    workspaceUrl: https://x.example.com\n    httpPath: /p\n    tokn: x\n');
    h.sandbox.clearRequests();
    const r = await run(['plan', 'manifests']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/manifests\/bad\.yaml:\d+:\d+: .*Integration\/bad/);
    expect(requestsBeyondLists(h.sandbox)).toEqual([]);
    await rm(path.join(h.dir, 'manifests', 'bad.yaml'));
  });

  it('bad flags are user errors', async () => {
    const r = await run(['apply', 'manifests', '--concurrency', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--concurrency must be a whole number >= 1/);
  });

  it('no secret value in any output or log line, nor in the state file', async () => {
    const state = await h.state();
    const all = [...outputs, JSON.stringify(state)].join('\n');
    expect(all.length).toBeGreaterThan(1000);
    for (const v of Object.values(secrets)) expect(all).not.toContain(v);
  });
});
