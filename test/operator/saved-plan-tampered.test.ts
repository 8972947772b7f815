/**
 * A saved plan file edited by hand (or cut short, or mangled on the way as a CI artifact) is refused with a clear
 * message before anything is read from the service or written: never a JavaScript error from deep in the check.
 * Through the real CLI against the sandbox.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { lakeManifest, webhookManifest } from '../apply/inproc.js';

const secrets = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-ZZZZ-9999', GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-YYYY-8888' };

describe('saved plan: a tampered file', () => {
  let h: Harness;
  let saved: Record<string, any>;
  const run = (args: string[]) => h.govops(args, secrets);

  beforeAll(async () => {
    h = await harness({ transitionMs: 20 });
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/1'));
    await h.writeManifest('hook.yaml', webhookManifest('hook'));
    expect((await run(['apply', 'manifests'])).code).toBe(0);
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    const p = await run(['plan', 'manifests', '--out', 'good.plan']);
    expect(p.code, p.stderr).toBe(0);
    saved = JSON.parse(await readFile(path.join(h.dir, 'good.plan'), 'utf8'));
  });
  afterAll(async () => {
    await h.close();
  });

  const edits: Array<[string, (p: Record<string, any>) => void, RegExp]> = [
    ['a change without its field changes', (p) => delete p.plan.changes[0].changes, /change 1 of the plan/],
    ['a change that is null', (p) => (p.plan.changes[0] = null), /change 1 of the plan/],
    ['a field change without a path', (p) => (p.plan.changes[0].changes = [{ sensitive: false }]), /change 1 of the plan/],
    ['an unknown action', (p) => (p.plan.changes[0].action = 'destroy'), /change 1 of the plan/],
    ["a resource's secrets as a string", (p) => (p.facts.secrets['Integration/lake'] = 'x'), /facts/],
    ['a live fact that is not an object', (p) => (p.facts.live['Integration/lake'] = 4), /facts/],
  ];
  for (const [what, edit, why] of edits) {
    it(`${what}: refused as not a saved plan, nothing requested`, async () => {
      const copy = structuredClone(saved);
      edit(copy);
      await writeFile(path.join(h.dir, 'edited.plan'), JSON.stringify(copy), { mode: 0o600 });
      h.sandbox.clearRequests();
      const r = await run(['apply', 'edited.plan']);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/edited\.plan is not a govops saved plan: /);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).not.toMatch(/Cannot read properties|is not iterable|Cannot use 'in' operator/);
      expect(h.sandbox.requests()).toEqual([]);
    });
  }

  it('the untouched file is applied', async () => {
    const r = await run(['apply', 'good.plan']);
    expect(r.code, r.stderr).toBe(0);
  });
});
