/**
 * `apply FILE` when a resource the saved plan changes was deleted since and the service gave its id to another one
 * (sandbox behaviour `reuse-ids`): refused, nothing written, and the refusal says what happened (the id now names
 * another integration, which) rather than "state changed (another apply?)" and a field change of the same resource.
 */
import path from 'node:path';
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from '../apply/harness.js';
import { lakeManifest } from '../apply/inproc.js';

const secrets = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-REUSE-7777' };

describe('a saved plan whose live id was reused', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ behaviours: ['reuse-ids'] });
    await mkdir(path.join(h.dir, 'manifests'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('apply FILE names the id, the integration it now names and the one the plan was made against; nothing is written', async () => {
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/1'));
    expect((await h.govops(['apply', 'manifests'], secrets)).code).toBe(0);
    const api = h.client();
    const [ours] = await api.listIntegrations();
    await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com', '/sql/2'));
    const p = await h.govops(['plan', 'manifests', '--out', 'update.plan'], secrets);
    expect(p.code, p.stderr).toBe(0);

    // out of band: govops' integration is deleted, and another team's new one gets its id
    await api.deleteIntegration(ours!.id, {});
    await expect.poll(async () => (await api.listIntegrations()).length, { timeout: 10_000 }).toBe(0);
    const theirs = await api.createIntegration({
      type: 'lakehouse',
      autoBootstrap: true,
      config: { workspaceUrl: 'https://others.example.com', httpPath: '/sql/9', token: 'tok-others' },
    });
    expect(String(theirs.id)).toBe(String(ours!.id));

    h.sandbox.clearRequests();
    const r = await h.govops(['apply', 'update.plan'], secrets);
    expect(r.code, r.stderr).toBe(1);
    expect(requestLines(h.sandbox).filter((l) => !l.startsWith('GET '))).toEqual([]);
    const items = r.stderr.split('\n').filter((l) => l.startsWith('  - '));
    expect(items, r.stderr).toEqual([
      expect.stringMatching(
        new RegExp(`^  - Integration/lake: the id ${ours!.id} the plan was made against now names another integration \\(lakehouse:workspace=others\\.example\\.com; the plan's was lakehouse:workspace=lake\\.example\\.com\\)`),
      ),
    ]);
    expect(r.stderr).not.toMatch(/another apply\?/);
    expect(r.stderr).toMatch(/Plan again/);
  });
});
