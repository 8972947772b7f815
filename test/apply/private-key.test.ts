/**
 * cloud_warehouse `privateKey` (interface 2.8): "New lines in the key are replaced by a backslash followed by n".
 * A key read from its PEM file (`fromFile`), or written as a YAML block, holds real new lines: govops sends it as the
 * interface states it (each new line written `\n`), so the service (the sandbox checks the rule) takes it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rig, type Rig } from './inproc.js';

const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

const warehouse = (privateKey: string, annotations = ''): string => `apiVersion: govops/v1
kind: Integration
metadata:
  name: cw-keypair${annotations}
spec:
  type: cloud_warehouse
  autoBootstrap: true
  config:
    host: cw-1.example.com
    warehouse: COMPUTE_WH
    database: governance
    role: ACCOUNTADMIN
    authenticationType: keyPair
    username: govops_system
    privateKey: ${privateKey}
  deleteCredentials:
    authenticationType: keyPair
    role: ACCOUNTADMIN
    privateKey: ${privateKey}
`;

let r: Rig;
beforeEach(async () => {
  r = await rig();
});
afterEach(async () => {
  await r.close();
});

describe('cloud_warehouse privateKey: new lines sent as a backslash followed by n (interface 2.8)', () => {
  it('a key read from its PEM file is created, then nothing to change, then deleted with the delete payload', async () => {
    await r.write('key.pem', PEM);
    await r.write('cw.yaml', warehouse('{ fromFile: key.pem }'));
    const created = await r.run();
    expect(created.ok, JSON.stringify(created)).toBe(true);
    expect(r.lines().filter((l) => l.startsWith('POST'))).toEqual(['POST /integrations?dryRun=true 200', 'POST /integrations 200']);
    r.sandbox.finishTransitions();
    const again = await r.run({ apply: false });
    expect(again.changed).toBe(false);
    await r.write('cw.yaml', warehouse('{ fromFile: key.pem }', '\n  annotations:\n    govops/delete: "true"'));
    r.sandbox.clearRequests();
    const deleted = await r.run({ prune: true });
    expect(deleted.ok, JSON.stringify(deleted)).toBe(true);
    expect(r.lines().filter((l) => l.startsWith('DELETE'))).toEqual(['DELETE /integrations/1?dryRun=true 200', 'DELETE /integrations/1 200']);
  });

  it('a key written as a YAML block (a plain literal) is taken too', async () => {
    const block = `|\n${PEM.trim().split('\n').map((l) => `      ${l}`).join('\n')}`;
    await r.write('cw.yaml', warehouse(block));
    const created = await r.run();
    expect(created.ok, JSON.stringify(created)).toBe(true);
  });
});
