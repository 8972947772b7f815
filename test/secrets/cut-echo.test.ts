/**
 * A service echoing the secret in a long error: govops keeps 2,000 characters of a message (200 of an answer that is
 * not JSON), and the cut falls inside the value. Redacted before it is cut, no part of the value is printed, and the
 * cut does not leave a piece of its `[redacted]` either.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ERROR_SNIPPET, MAX_ERROR_TEXT } from '../../src/api/normalize.js';
import type { TestServer } from '../api/server.js';
import { configValue, PASSWORD_MANIFEST, manifestFolder, startAnsweringService, type Answer, type ManifestFolder } from '../helpers/answering-service.js';

/** Its first part is what a cut after it would print: what the outputs are searched for. */
const HEAD = `CANARY-${randomBytes(4).toString('hex')}`;
const SECRET = `${HEAD}-the-rest-of-the-value`;
const SAID = 'cannot use the password ';

/** The message padded so that the cut at `limit` falls `into` characters into the value. */
const padded = (value: string, limit: number, into: number): string => `${'x'.repeat(limit - SAID.length - into)}${SAID}${value}; try again`;

describe('a service echoing the secret across the cut of its error text', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  let answer: (password: string) => Answer;

  beforeAll(async () => {
    service = await startAnsweringService((body) => answer(configValue(body, 'password')));
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });
  const env = (): Record<string, string> => ({ GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run', GOVOPS_SECRET_PW: SECRET });

  const cases: Array<[string, (password: string) => Answer]> = [
    ['a JSON message cut at 2,000 characters', (p) => ({ status: 400, json: { statusCode: 400, error: 'Bad Request', message: padded(p, MAX_ERROR_TEXT, HEAD.length + 3) } })],
    ['a JSON message whose [redacted] the cut would split', (p) => ({ status: 400, json: { statusCode: 400, error: 'Bad Request', message: padded(p, MAX_ERROR_TEXT, 4) } })],
    ['a plain-text answer cut at 200 characters', (p) => ({ status: 400, text: padded(p, MAX_ERROR_SNIPPET, HEAD.length + 3) })],
  ];
  for (const [what, make] of cases) {
    it(`${what}: no part of the value in text or JSON output`, async () => {
      answer = make;
      for (const output of ['text', 'json']) {
        const r = await folder.govops(['apply', 'manifests', '--output', output], env());
        const all = r.stdout + r.stderr;
        expect(r.code, all).toBe(1);
        expect(all).toContain(SAID.trim()); // the message is shown...
        expect(all, `${what} ${output}`).not.toContain(HEAD); // ...without the part of the value before the cut
        expect(all.replaceAll('[redacted]', '')).not.toMatch(/\[reda|dacted\]/); // ...nor a piece of its [redacted]
      }
    });
  }
});
