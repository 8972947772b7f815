/**
 * A service written in another language echoes the request it parsed, written again by its own JSON serializer
 * (Go's encoding/json, .NET's System.Text.Json): the secret comes back HTML-safe escaped (`\u0026`, `\u003c`), in
 * upper-case hex (`\u003C`, `\u00FC`). `govops apply` prints none of it, in text or JSON output, nor in its log.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../api/server.js';
import { PASSWORD_MANIFEST, configValue, manifestFolder, startAnsweringService, type ManifestFolder } from '../helpers/answering-service.js';

/** The part no encoding changes: what the outputs are searched for. */
const CORE = `CANARY-${randomBytes(4).toString('hex')}`;
/** Then characters each serializer writes its own way: HTML-sensitive, a quote, non-ASCII. */
const SECRET = `${CORE}&3-h<b>'x+"ü`;

/** Go's json.Marshal: HTML-safe, lower-case hex. */
const goJson = (v: unknown): string => JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** .NET's JsonSerializer with the default encoder: HTML-sensitive characters and non-ASCII, upper-case hex. */
const dotnetJson = (v: unknown): string =>
  JSON.stringify(v)
    .replace(/\\"/g, '\\u0022')
    .replace(/[<>&'+`]|[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);

/** Python's str() of the parsed body (a dict): each string as repr() writes it, `'` quoted with `'` escaped (SECRET holds `"` too). */
const pythonStr = (v: unknown): string => {
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (Array.isArray(v)) return `[${v.map(pythonStr).join(', ')}]`;
  if (v && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${pythonStr(k)}: ${pythonStr(x)}`).join(', ')}}`;
  return v === true ? 'True' : v === false ? 'False' : v === null ? 'None' : String(v);
};

describe('a service echoing the request re-encoded by another serializer', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  let reencode: (v: unknown) => string = goJson;

  beforeAll(async () => {
    service = await startAnsweringService((body) => ({ status: 400, json: { statusCode: 400, error: 'Bad Request', message: `invalid request ${reencode(body)}` } }));
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });
  const env = (): Record<string, string> => ({ GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run', GOVOPS_SECRET_PW: SECRET });

  for (const [who, encode, written] of [
    ['Go', goJson, String.raw`\u00263-h\u003cb\u003e`],
    ['.NET', dotnetJson, String.raw`\u00263-h\u003Cb\u003E\u0027x\u002B\u0022\u00FC`],
    // a Python service's error text: str() of the parsed request, `"` as it is and `'` escaped
    ['Python', pythonStr, String.raw`&3-h<b>\'x+`],
  ] as const) {
    it(`${who}: the echo reaches the outputs, never the secret (text and JSON output, debug log)`, async () => {
      reencode = encode;
      expect(JSON.stringify(encode({ password: SECRET }))).toContain(written.replace(/\\/g, '\\\\')); // the echo is as described
      for (const output of ['text', 'json']) {
        const r = await folder.govops(['apply', 'manifests', '--output', output, '--log-level', 'debug'], env());
        const all = r.stdout + r.stderr;
        expect(r.code, all).toBe(1);
        expect(all).toContain('invalid request'); // the service's message is shown...
        expect(all).toContain('[redacted]');
        expect(all, `${who} ${output}`).not.toContain(CORE); // ...without the secret in any form
      }
    });
  }
});

/** escape-html (Express's error pages), lodash, Spring's HtmlUtils, .NET's WebUtility.HtmlEncode. */
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

describe('a proxy or a framework in front of the service answering an HTML error page that echoes the value', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  beforeAll(async () => {
    service = await startAnsweringService((body) => ({
      status: 400,
      text: `<html><body><h1>400</h1><p>rejected: ${escapeHtml(JSON.stringify(configValue(body, 'password')))}</p></body></html>`,
    }));
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });

  it('the page reaches the outputs, never the secret (text and JSON output, debug log)', async () => {
    for (const output of ['text', 'json']) {
      const r = await folder.govops(['apply', 'manifests', '--output', output, '--log-level', 'debug'], { GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run', GOVOPS_SECRET_PW: SECRET });
      const all = r.stdout + r.stderr;
      expect(r.code, all).toBe(1);
      expect(all).toContain('rejected');
      expect(all).toContain('[redacted]');
      expect(all, output).not.toContain(CORE);
    }
  });
});
