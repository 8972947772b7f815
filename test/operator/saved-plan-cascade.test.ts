/**
 * A saved plan that deletes an integration deletes, with it, every data source the service holds under it (the service
 * cascades). The plan shows those govops does not manage (a `cascade-delete` warning naming their ids); one registered
 * under the integration after the plan was made would be deleted by `apply FILE` without the reviewed plan saying so.
 * Through the real CLI against the sandbox.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, requestLines, type Harness } from '../apply/harness.js';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';

const writes = (h: Harness): string[] => requestLines(h.sandbox).filter((l) => !l.startsWith('GET ') && !l.includes('dryRun'));
const markedDelete = (manifest: string): string => manifest.replace(/^( {2}name: .*)$/m, `$1\n  annotations:\n    govops/delete: "true"`);

describe('saved plan: an integration delete and the data sources it cascades to', () => {
  let h: Harness;
  const run = (args: string[]) => h.govops(args);

  beforeAll(async () => {
    h = await harness({ transitionMs: 20 });
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('store.yaml', store('raw', 's3://raw.example.com/'));
    await h.writeManifest('a.yaml', source('a', 'raw', 's3://raw.example.com/a'));
    await h.writeManifest('keep.yaml', store('keep', 's3://keep.example.com/'));
    const r = await run(['apply', 'manifests']);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await h.close();
  });

  it('refused when a data source was registered under the integration it deletes since the plan (the delete would take it too)', async () => {
    await h.writeManifest('store.yaml', markedDelete(store('raw', 's3://raw.example.com/')));
    await h.writeManifest('a.yaml', markedDelete(source('a', 'raw', 's3://raw.example.com/a')));
    const p = await run(['plan', 'manifests', '--prune', '--max-deletes', '2', '--out', 'del.plan']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/Integration\/raw .*will be deleted|- Integration\/raw/);
    expect(p.stdout + p.stderr).not.toMatch(/data sources? govops does not manage/);
    // someone registers their own data source under the integration after the review
    const raw = (await h.state()).resources.find((r) => r.kind === 'Integration' && r.name === 'raw')!.id;
    const [theirs] = await h.client().createDataSources(raw, [{ dataSourceName: 'Theirs', prefix: 's3://raw.example.com/theirs' }]);
    h.sandbox.clearRequests();
    const a = await run(['apply', 'del.plan']);
    expect(a.code, a.stdout + a.stderr).toBe(1);
    expect(a.stderr).toMatch(/the saved plan del\.plan is stale; nothing was applied/);
    expect(a.stderr).toMatch(new RegExp(`Integration/raw \\(id ${raw}\\) changed in the service since the plan: dataSources`));
    expect(writes(h)).toEqual([]);
    expect((await h.client().listDataSources()).map((d) => d.id)).toContain(theirs!.id);
    // planned again, the plan names it; that plan is applied as reviewed
    const again = await run(['plan', 'manifests', '--prune', '--max-deletes', '2', '--out', 'del2.plan']);
    expect(again.stdout + again.stderr).toMatch(new RegExp(`also deletes 1 data source govops does not manage \\(ids ${theirs!.id}\\)`));
    const ok = await run(['apply', 'del2.plan']);
    expect(ok.code, ok.stderr).toBe(0);
  });
});
