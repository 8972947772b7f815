/**
 * A service whose error message is JSON encoded twice (an upstream's JSON error, itself the message of a JSON error,
 * in the service's JSON answer): a secret holding `"` or `\` comes back escaped three times over in the message, four
 * in the body. Covered already (the message is redacted when the error is made, at three JSON nestings, the forms'
 * limit); a guard, written by the third redaction audit, which found no leak here. A message nesting it four times
 * over is past the forms' limit and found by the decoded views (test/secrets/deep-echo.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../api/server.js';
import { PASSWORD_MANIFEST, manifestFolder, startAnsweringService, type ManifestFolder } from '../helpers/answering-service.js';

const CORE = 'CANARY-jj-Qw7';
const SECRET = `${CORE}"q\\b'x`;

describe('a service echoing the request in a message JSON-encoded twice', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  beforeAll(async () => {
    service = await startAnsweringService((body) => {
      const upstream = JSON.stringify({ error: 'validation failed', request: JSON.stringify(body) });
      return { status: 400, json: { statusCode: 400, error: 'Bad Request', message: JSON.stringify({ upstream }) } };
    });
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });

  it('the message reaches the outputs, never the secret (text and JSON output, debug log)', async () => {
    for (const output of ['text', 'json']) {
      const r = await folder.govops(['apply', 'manifests', '--output', output, '--log-level', 'debug'], { GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run', GOVOPS_SECRET_PW: SECRET });
      const all = r.stdout + r.stderr;
      expect(r.code, all).toBe(1);
      expect(all).toContain('validation failed');
      expect(all, `${output}\n${all}`).not.toContain(CORE);
    }
  });
});
