/**
 * A create whose unique config value (object_store cloudLocationPath, interface 8) another team's integration
 * holds: the plan blocks it, naming the holder, and apply sends nothing for it (the service would refuse it with a
 * 409 after every retry). The sandbox enforces the rule itself: with the path freed, the same apply goes through.
 */
import { mkdir, rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from './harness.js';
import { objectStoreManifest as store } from '../helpers/manifests.js';

describe('a cloudLocationPath held by an integration govops does not own', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ transitionMs: 20 });
    await mkdir(`${h.dir}/manifests`);
  });
  afterAll(async () => {
    await h.close();
  });

  it('plan and apply block the create (exit 1, nothing sent); once the holder is gone, apply creates it', async () => {
    const api = h.client();
    const theirs = await api.createIntegration({
      type: 'object_store',
      autoBootstrap: false,
      config: { name: 'theirs', cloudAccountId: '210987654321', cloudRegion: 'us-east-1', cloudLocationRole: 'arn:cloud:iam::210987654321:role/r', cloudLocationPath: 's3://shared/', authenticationType: 'auto' },
    });
    await h.writeManifest('mine.yaml', store('mine', 's3://shared/'));
    const plan = await h.govops(['plan', 'manifests']);
    expect(plan.stdout + plan.stderr).toMatch(new RegExp(`config\\.cloudLocationPath \`s3://shared/\` is used by integration ${theirs.id} \\(status \\w+\\), which this plan does not delete`));
    h.sandbox.clearRequests();
    const r = await h.govops(['apply', 'manifests']);
    expect(r.code).toBe(1);
    expect(requestLines(h.sandbox).filter((l) => l.startsWith('POST') || l.startsWith('PUT') || l.startsWith('DELETE'))).toEqual([]);
    expect((await api.listIntegrations()).map((i) => i.config.name)).toEqual(['theirs']);

    await api.deleteIntegration(String(theirs.id), {});
    await expect.poll(async () => (await api.listIntegrations()).length, { timeout: 10_000 }).toBe(0);
    const again = await h.govops(['apply', 'manifests']);
    expect(again.code, again.stderr).toBe(0);
    expect((await api.listIntegrations()).map((i) => i.config.name)).toEqual(['mine']);
  });

  it("govops' own integration holding the path, pruned in the same apply: the new one is created after the delete", async () => {
    const slow = await harness({ transitionMs: 800 });
    try {
      await mkdir(`${slow.dir}/manifests`);
      await slow.writeManifest('old.yaml', store('old', 's3://moved/'));
      expect((await slow.govops(['apply', 'manifests'])).code).toBe(0);
      await rm(`${slow.dir}/manifests/old.yaml`);
      await slow.writeManifest('new.yaml', store('new', 's3://moved/'));
      const plan = await slow.govops(['plan', 'manifests', '--prune']);
      expect(plan.stdout).not.toMatch(/value-taken|is used by integration/);
      const r = await slow.govops(['apply', 'manifests', '--prune']);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect((await slow.client().listIntegrations()).map((i) => i.config.name)).toEqual(['new']);
    } finally {
      await slow.close();
    }
  });
});
