import { describe, expect, it } from 'vitest';
import { exportConfig } from '../../src/export/config.js';
import { configShapes } from '../../src/manifests/shapes.js';
import { parseManifestText } from '../../src/manifests/parse.js';

const ref = (path: readonly string[]) => ({ fromEnv: `V_${path.join('_')}` });

describe('exportConfig', () => {
  it('writes every credential as a reference, even one a service returned in clear', () => {
    const live = { host: 'h.example.com', database: 'D', schema: 'S', username: 'admin-canary', password: 'pw-canary', port: 1433 };
    const out = exportConfig(configShapes(), 'sql_analytics', live, ref);
    expect(JSON.stringify(out)).not.toMatch(/canary/);
    expect(out).toEqual({ host: 'h.example.com', database: 'D', schema: 'S', username: { fromEnv: 'V_username' }, password: { fromEnv: 'V_password' } });
  });

  it('leaves out defaults, nulls, empty values and fields it does not know; numbers sent as strings are numbers', () => {
    const live = {
      host: 'w.example.com', warehouse: 'W', database: 'D', authenticationType: 'keyPair', privateKey: '********',
      port: '443', audit: { enabled: false, historicalIngestionMonths: 3 }, workspaces: { enabled: 'true', warehouses: [] },
      connectArgs: '', lineage: null, serverVersion: '7.1', impersonation: { enabled: false, role: 'SERVICE_IMPERSONATION', extra: 1 },
    };
    expect(exportConfig(configShapes(), 'cloud_warehouse', live, ref)).toEqual({
      host: 'w.example.com', warehouse: 'W', database: 'D', authenticationType: 'keyPair', privateKey: { fromEnv: 'V_privateKey' },
      workspaces: { enabled: true },
    });
  });

  it('adds the references the authentication requires when the service left the credentials out', () => {
    const live = { host: 'c.example.com', database: 'D', authenticationType: 'okta', okta: { appId: 'a', idpHost: 'https://idp.example.com', role: 'r' } };
    expect(exportConfig(configShapes(), 'columnar_warehouse', live, ref)).toMatchObject({
      okta: { appId: 'a', username: { fromEnv: 'V_okta_username' }, password: { fromEnv: 'V_okta_password' } },
    });
  });
});

describe('exportConfig of a sub-object the schema requires', () => {
  it('keeps lineage.lineageConfig while lineage is enabled, even when all it holds are defaults (validate requires it)', () => {
    const base = { host: 'w.example.com', warehouse: 'W', database: 'D', authenticationType: 'keyPair', privateKey: '********' };
    const filled = { ...base, lineage: { enabled: true, lineageConfig: { tableFilter: '^.*$', tagFilterRegex: '^.*$', ingestBatchSize: 1000 } } };
    const config = exportConfig(configShapes(), 'cloud_warehouse', filled, ref);
    expect(config).toMatchObject({ lineage: { enabled: true, lineageConfig: {} } });
    const manifest = { apiVersion: 'govops/v1', kind: 'Integration', metadata: { name: 'w' }, spec: { type: 'cloud_warehouse', autoBootstrap: false, config } };
    expect(parseManifestText(JSON.stringify(manifest), 'w.yaml', '/tmp').diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(exportConfig(configShapes(), 'cloud_warehouse', { ...base, lineage: { enabled: 'true', lineageConfig: {} } }, ref)).toMatchObject({ lineage: { enabled: true, lineageConfig: {} } });
    // a service that leaves out what equals its default (omit-defaults) leaves out lineageConfig whole
    expect(exportConfig(configShapes(), 'cloud_warehouse', { ...base, lineage: { enabled: true } }, ref)).toMatchObject({ lineage: { enabled: true, lineageConfig: {} } });
    // disabled: the defaults are left out as everywhere else
    const off = exportConfig(configShapes(), 'cloud_warehouse', { ...base, lineage: { enabled: false, lineageConfig: { tableFilter: '^.*$' } } }, ref);
    expect(off).not.toHaveProperty('lineage');
  });
});

describe('exportConfig of a URL with a password inside a string', () => {
  it('writes a reference, as for a connection string with PWD=', () => {
    const live = { host: 'h.example.com', database: 'D', schema: 'S', username: 'u', password: 'p', connectArgs: 'Server=x;Proxy=http://u:canary-pw@proxy.example.com:8080' };
    const out = exportConfig(configShapes(), 'sql_analytics', live, ref);
    expect(JSON.stringify(out)).not.toContain('canary');
    expect(out).toMatchObject({ connectArgs: { fromEnv: 'V_connectArgs' } });
    // a port or a user name alone is no credential
    const plain = exportConfig(configShapes(), 'sql_analytics', { ...live, connectArgs: 'Proxy=http://u@proxy.example.com:8080/a@b' }, ref);
    expect(plain).toMatchObject({ connectArgs: 'Proxy=http://u@proxy.example.com:8080/a@b' });
  });
});
