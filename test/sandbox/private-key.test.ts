/**
 * cloud_warehouse `privateKey` (interface 2.8, and the 2.9 delete payload): "New lines in the key are replaced by a
 * backslash followed by n". The sandbox holds the service to it (a key with real new lines is a 400 naming the
 * field); govops relies on that to prove it sends keys written so (test/apply/private-key.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { bodyFor, call, settle, sandboxPerFile } from './harness.js';

const box = sandboxPerFile();

const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';
const ESCAPED = PEM.replace(/\n/g, '\\n');

function keyPair(privateKey: string): Record<string, unknown> {
  const b = structuredClone(bodyFor('cloud_warehouse')) as { config: Record<string, unknown> };
  b.config.authenticationType = 'keyPair';
  delete b.config.password;
  b.config.privateKey = privateKey;
  return b;
}

describe('privateKey with its new lines written as a backslash followed by n', () => {
  it.each([
    ['LF', PEM],
    ['CRLF', PEM.replace(/\n/g, '\r\n')],
  ])('config: a key with real new lines (%s) is a 400 naming config.privateKey; written \\n it is accepted', async (_name, key) => {
    const bad = await call(box.sb, 'POST', '/integrations?dryRun=true', { body: keyPair(key) });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.message).toContain('config.privateKey');
    const good = await call(box.sb, 'POST', '/integrations?dryRun=true', { body: keyPair(ESCAPED) });
    expect(good.status, good.text).toBe(200);
  });

  it('delete payload (2.9): the same rule', async () => {
    const c = await call(box.sb, 'POST', '/integrations', { body: bodyFor('cloud_warehouse') });
    expect(await settle(box.sb, c.body.id)).toBe('enabled');
    const bad = await call(box.sb, 'DELETE', `/integrations/${c.body.id}?dryRun=true`, { body: { authenticationType: 'keyPair', role: 'R', privateKey: PEM } });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.message).toContain('privateKey');
    const good = await call(box.sb, 'DELETE', `/integrations/${c.body.id}?dryRun=true`, { body: { authenticationType: 'keyPair', role: 'R', privateKey: ESCAPED } });
    expect(good.status, good.text).toBe(200);
  });
});
