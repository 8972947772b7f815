import { describe, expect, it } from 'vitest';
import { assignNames, envName, NAME_PATTERN, sanitizeName } from '../../src/export/names.js';

describe('export names', () => {
  it('sanitises to a valid manifest name', () => {
    expect(sanitizeName('Finance.Warehouse.example.com')).toBe('finance-warehouse-example-com');
    expect(sanitizeName('--Ünïcode__Name--')).toBe('unicode-name');
    expect(sanitizeName('x'.repeat(80) + '-y')).toHaveLength(63);
    expect(sanitizeName('!!!')).toBe('');
  });

  it('resolves collisions deterministically, whatever the order of the resources', () => {
    const reqs = [
      { key: 'object_store:name=Raw Bucket', base: 'Raw Bucket', fallback: 'object_store', id: '7' },
      { key: 'object_store:name=raw-bucket', base: 'raw-bucket', fallback: 'object_store', id: '3' },
      { key: 'object_store:name=RAW_BUCKET', base: 'RAW_BUCKET', fallback: 'object_store', id: '9' },
      { key: 'object_store:name=other', base: 'other', fallback: 'object_store', id: '1' },
    ];
    const names = assignNames(reqs);
    expect(new Set(names).size).toBe(4);
    for (const n of names) expect(n).toMatch(NAME_PATTERN);
    // the first natural key (code-unit order: RAW_BUCKET) keeps the plain name
    expect(names[2]).toBe('raw-bucket');
    expect(names[3]).toBe('other');
    expect(names[0]).toMatch(/^raw-bucket-[0-9a-f]{6}$/);
    expect(names[1]).toMatch(/^raw-bucket-[0-9a-f]{6}$/);
    const reversed = assignNames([...reqs].reverse());
    expect([...reversed].reverse()).toEqual(names);
  });

  it('falls back to the kind when nothing of the base is usable', () => {
    expect(assignNames([{ key: 'k', base: '***', fallback: 'distributed_sql', id: '1' }])).toEqual(['distributed-sql']);
  });

  it('makes environment variable names under the prefix', () => {
    expect(envName('GOVOPS_SECRET_', ['finance-warehouse', 'oAuthClientConfig', 'clientSecret'])).toBe('GOVOPS_SECRET_FINANCE_WAREHOUSE_O_AUTH_CLIENT_CONFIG_CLIENT_SECRET');
  });
});
