/**
 * The service tests the connection with the credentials it was given (HTTP Basic to the data platform) and its error
 * carries the request it made, as axios' `error.toJSON()` does (`config.headers.Authorization`): the password comes
 * back in base64, after the user name. `govops apply` prints none of it, in text or JSON output, nor in its log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../api/server.js';
import { PASSWORD_MANIFEST, configValue, manifestFolder, startAnsweringService, type ManifestFolder } from '../helpers/answering-service.js';

const SECRET = 'CANARY-b64-Zq8#tW3$pL9!';

describe('a service echoing the Authorization: Basic header it sent to the data platform', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  let header = '';
  beforeAll(async () => {
    service = await startAnsweringService((body) => {
      header = `Basic ${Buffer.from(`${configValue(body, 'username')}:${configValue(body, 'password')}`).toString('base64')}`;
      const error = { message: 'Request failed with status code 401', name: 'AxiosError', config: { method: 'post', headers: { Authorization: header } } };
      return { status: 400, json: { statusCode: 400, error: 'Bad Request', message: `Basic Connection Test failed: ${JSON.stringify(error)}` } };
    });
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });

  it('the error reaches the outputs, never the password in base64 (text and JSON output, debug log)', async () => {
    for (const output of ['text', 'json']) {
      const r = await folder.govops(['apply', 'manifests', '--output', output, '--log-level', 'debug'], { GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run', GOVOPS_SECRET_PW: SECRET });
      const all = r.stdout + r.stderr;
      expect(r.code, all).toBe(1);
      expect(all).toContain('Basic Connection Test failed');
      expect(all).toContain('[redacted]');
      // everything after the user name's characters is the password's
      expect(all, output).not.toContain(header.slice(-16));
      expect(all, output).not.toContain(header.slice('Basic '.length + 20, -4));
    }
  });
});
