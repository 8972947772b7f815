/**
 * The sandbox's data-source store keeps its data sources indexed by integration, so a create (the names and
 * prefixes taken) and an integration's delete (the cascade) read one integration's group instead of every data
 * source in the service. Pinned here to what a pass over every data source gives, in the same order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Behaviours } from '../../src/sandbox/behaviours.js';
import { DataSourceStore, type StoredDataSource } from '../../src/sandbox/data-sources/store.js';

/** What `active` gave before the index: every data source, in the store's order, filtered. */
const scanActive = (all: readonly StoredDataSource[], integrationId: number): number[] =>
  all.filter((d) => d.integrationId === integrationId && d.deletedAt === undefined).map((d) => d.id);

const op = fc.oneof(
  fc.record({ insert: fc.integer({ min: 1, max: 4 }), count: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ remove: fc.nat(40) }),
  fc.record({ removeIntegration: fc.integer({ min: 1, max: 4 }) }),
  fc.constant({ restore: true }),
);

describe('DataSourceStore: data sources by integration', () => {
  it('active and removeIntegration give what a pass over every data source gives (random creates, soft and hard deletes, cascades, reused ids, restores)', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), fc.boolean(), fc.boolean(), (ops, reuse, hard) => {
        const flags = [...(reuse ? ['reuse-ids'] : []), ...(hard ? ['hard-delete'] : [])];
        const store = new DataSourceStore({ behaviours: new Behaviours(flags), now: () => 0, onChange: () => undefined });
        let n = 0;
        for (const o of ops) {
          if ('insert' in o) {
            const items = Array.from({ length: o.count }, () => ({ dataSourceName: `ds-${n}`, prefix: `s3://b/${n++}/` }));
            store.insert(o.insert, items);
          } else if ('remove' in o) {
            const d = store.get(o.remove);
            if (d) store.delete(d);
          } else if ('removeIntegration' in o) {
            const expected = store.list().filter((d) => d.integrationId === o.removeIntegration).length;
            expect(store.removeIntegration(o.removeIntegration)).toBe(expected);
            expect(store.list().some((d) => d.integrationId === o.removeIntegration)).toBe(false);
          } else {
            store.restore(JSON.parse(JSON.stringify(store.snapshot())));
          }
          for (let id = 1; id <= 4; id++) expect(store.active(id).map((d) => d.id)).toEqual(scanActive(store.list(), id));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('restores a snapshot of 200,000 data sources (the next id without a spread of every id)', () => {
    const store = new DataSourceStore({ behaviours: new Behaviours(undefined), now: () => 0, onChange: () => undefined });
    const dataSources = Array.from({ length: 200_000 }, (_, i) => ({ id: i + 1, integrationId: 1 + (i % 7), dataSourceName: `d${i}`, prefix: `p${i}`, createdAt: 'x' }));
    store.restore({ nextId: 5, dataSources });
    expect(store.size).toBe(200_000);
    expect(store.insert(3, [{ dataSourceName: 'new', prefix: 'new' }])[0]!.id).toBe(200_001);
    expect(store.active(3)).toHaveLength(dataSources.filter((d) => d.integrationId === 3).length + 1);
  });
});
