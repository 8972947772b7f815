/**
 * A data-source create is a write under an integration: the service answers it 409 while the integration is being
 * changed (`editing`; docs/sandbox.md, as PUT and DELETE on the integration itself, interface 3 and 7). An integration
 * enabled when planned may be edited (by someone else) by the time its data sources are sent: as for the integration's
 * own writes (src/apply/integration.ts retryOnConflict), the batch waits for it to settle and is sent again.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dataSourceManifest as source, objectStoreManifest as store } from '../helpers/manifests.js';
import { rig, type Rig } from './inproc.js';

let w: Rig | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe('a data-source create while its integration is busy (409)', () => {
  it('waits for the integration to settle and sends the batch again: created once', async () => {
    w = await rig({ transitionMs: 200 });
    const r = w;
    await r.write('store.yaml', store('raw', 's3://raw/'));
    expect((await r.run()).ok).toBe(true);
    await r.write('ds.yaml', [source('events', 'raw', 's3://raw/events'), source('logs', 'raw', 's3://raw/logs')].join('---\n'));
    r.sandbox.clearRequests();
    const res = await r.run({
      // someone else starts an edit of the integration once govops has planned
      onPlan: () => r.sandbox.integrations.begin(r.sandbox.integrations.get(1)!, 'editing', false),
    });
    expect(res.ok, res.error).toBe(true);
    const posts = r.lines().filter((l) => l.startsWith('POST /native-s3/handler'));
    expect(posts).toEqual(['POST /native-s3/handler 409', 'POST /native-s3/handler 200']);
    expect(r.sandbox.dataSources.list().map((d) => d.dataSourceName)).toEqual(['events', 'logs']);
    expect((await r.state()).resources.filter((e) => e.kind === 'DataSource').map((e) => [e.name, e.pending])).toEqual([
      ['events', undefined],
      ['logs', undefined],
    ]);
  });

  it('a 409 while the integration is enabled (a name or prefix taken since the plan) is not retried', async () => {
    w = await rig({ transitionMs: 50 });
    const r = w;
    await r.write('store.yaml', store('raw', 's3://raw/'));
    expect((await r.run()).ok).toBe(true);
    await r.write('ds.yaml', source('events', 'raw', 's3://raw/events'));
    r.sandbox.clearRequests();
    const res = await r.run({
      onPlan: () => {
        r.sandbox.dataSources.insert(1, [{ dataSourceName: 'events', prefix: 's3://raw/theirs' }]);
      },
    });
    expect(res.ok).toBe(false);
    expect(r.lines().filter((l) => l.startsWith('POST /native-s3/handler'))).toEqual(['POST /native-s3/handler 409']);
    expect(res.outcomes.find((o) => o.name === 'events')!.error).toMatch(/events/);
  });
});
