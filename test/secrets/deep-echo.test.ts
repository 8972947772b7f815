/**
 * Echoes past the forms' reach (2026-11-28, fourth redaction audit): a request JSON-encoded four times over in a
 * service's message, and an HTML or XML page written by an escaper the forms did not list (XML's `&apos;`, Go
 * html/template's `&#43;`, lower-case hex entities). Both printed the secret before (`govops apply`, text and JSON
 * output, debug log); the redactor now also reads a text through its decoded views (src/util/decoded-views.ts).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../api/server.js';
import { type Answer, PASSWORD_MANIFEST, configValue, manifestFolder, startAnsweringService, type ManifestFolder } from '../helpers/answering-service.js';

/** The part no encoding changes: what the outputs are searched for. */
const CORE = `CANARY-${randomBytes(4).toString('hex')}`;
/** Then characters each encoding writes its own way. */
const SECRET = `${CORE}"q\\b'x+&é`;

/** Go's html/template: `" ' + & < >` as `&#34; &#39; &#43; &amp; &lt; &gt;`. */
const goTemplate = (s: string): string => s.replace(/[&<>"'+]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;', '+': '&#43;' })[c]!);
/** XML as Java's StringEscapeUtils.escapeXml10 and .NET's SecurityElement.Escape write it: `'` as `&apos;`. */
const xmlEscape = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
/** OWASP ESAPI's encodeForHTML: every character but alphanumerics as a lower-case hex entity. */
const esapi = (s: string): string => s.replace(/[^A-Za-z0-9 ]/g, (c) => `&#x${c.codePointAt(0)!.toString(16)};`);

describe('echoes past the forms', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  let answer: (body: unknown) => Answer = () => ({ status: 500, text: '' });
  beforeAll(async () => {
    service = await startAnsweringService((body) => answer(body));
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });

  const expectNoSecret = async (shown: string): Promise<void> => {
    for (const output of ['text', 'json']) {
      const r = await folder.govops(['apply', 'manifests', '--output', output, '--log-level', 'debug'], { GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run', GOVOPS_SECRET_PW: SECRET });
      const all = r.stdout + r.stderr;
      expect(r.code, all).toBe(1);
      expect(all).toContain(shown); // the echo reaches the outputs...
      expect(all).toContain('[redacted]');
      expect(all, `${output}\n${all}`).not.toContain(CORE); // ...without the secret
    }
  };

  it('the request JSON-encoded four times over in the message (a JSON string inside three more)', async () => {
    answer = (body) => {
      const request = JSON.stringify(JSON.stringify(JSON.stringify(body)));
      return { status: 400, json: { statusCode: 400, error: 'Bad Request', message: JSON.stringify({ upstream: 'validation failed', request }) } };
    };
    await expectNoSecret('validation failed');
  });

  for (const [who, escape] of [
    ['Go html/template', goTemplate],
    ['XML (&apos;)', xmlEscape],
    ['ESAPI (lower-case hex entities)', esapi],
  ] as const) {
    it(`an error page echoing the value as ${who} writes it`, async () => {
      answer = (body) => ({ status: 400, text: `<html><body><p>rejected: ${escape(configValue(body, 'password'))}</p></body></html>` });
      await expectNoSecret('rejected');
    });
  }
});
