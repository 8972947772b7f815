/**
 * A secret of several lines (a PEM key) echoed by the service: an error shown on one line joins its lines, and an
 * error printed line by line splits them; either way the value is no longer whole, so it is redacted before.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, describeError } from '../../src/errors.js';
import { REDACTED, registerSecrets } from '../../src/util/redact.js';
import { printableLines } from '../../src/util/terminal.js';
import type { TestServer } from '../api/server.js';
import { configValue, manifestFolder, startAnsweringService, type ManifestFolder } from '../helpers/answering-service.js';

/** A private key as a file holds it, and its base64 lines (what must not be printed). */
const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trim();
const BODY_LINES = PEM.split('\n').filter((l) => !l.startsWith('-----'));

const leaked = (text: string): string[] => BODY_LINES.filter((l) => text.includes(l.slice(0, 24)));

describe('a multi-line secret in an error', () => {
  it('ApiError on one line (fatal errors, the daemon): redacted before its lines are joined', () => {
    registerSecrets(PEM);
    const err = new ApiError(400, 'Bad Request', `cannot parse the key:\n${PEM}`, 'POST', '/integrations/scripts/create');
    expect(err.toString()).toBe(`POST /integrations/scripts/create: 400 Bad Request: cannot parse the key: ${REDACTED}`);
    expect(leaked(describeError(err))).toEqual([]);
  });

  it('printableLines (an error and its hint): redacted before it is split, CRLF lines too', () => {
    const crlf = 'crlf-KEY-line-one\r\ncrlf-KEY-line-two';
    registerSecrets(crlf);
    expect(printableLines(`error: ${crlf}\n  hint: check the key`)).toBe(`error: ${REDACTED}\n  hint: check the key`);
  });
});

describe('govops scripts --phase create, the service echoing the private key it could not parse', () => {
  let service: TestServer;
  let folder: ManifestFolder;

  beforeAll(async () => {
    service = await startAnsweringService((body) => ({
      status: 400,
      json: { statusCode: 400, error: 'Bad Request', message: `cannot parse the key:\n${configValue(body, 'privateKey')}` },
    }));
    folder = await manifestFolder({
      'key.pem': `${PEM}\n`,
      'warehouse.yaml': `apiVersion: govops/v1
kind: Integration
metadata:
  name: cw-keypair
spec:
  type: cloud_warehouse
  autoBootstrap: false
  config:
    host: cw-1.example.com
    warehouse: COMPUTE_WH
    database: governance
    authenticationType: keyPair
    username: govops_system
    privateKey: { fromFile: key.pem }
`,
    });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });

  it('the fatal error names the service error, never a line of the key', async () => {
    const r = await folder.govops(['scripts', 'cw-keypair', '--phase', 'create', 'manifests'], { GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('service error: POST /integrations/scripts/create: 400 Bad Request: cannot parse the key:');
    expect(leaked(r.stdout + r.stderr)).toEqual([]);
  });
});
