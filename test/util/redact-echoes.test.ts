/**
 * Echoes of a secret the redactor once missed (2026-11-28, fifth redaction audit): each written to a log line (the real
 * logger) and to an output stream (the CLI's stdout), and not found in either.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { REDACTED, redactingStream, registerSecretsInForce, secretRedactor } from '../../src/util/redact.js';

/** What the real logger writes for `msg` (one JSON line) and what stdout writes for it, with `secrets` in force. */
function printed(secrets: string[], msg: string): { log: string; out: string } {
  registerSecretsInForce(...secrets);
  let log = '';
  let out = '';
  const sink = (add: (s: string) => void): Writable =>
    new Writable({
      write(chunk: Buffer | string, _enc, done) {
        add(chunk.toString());
        done();
      },
    });
  createLogger({ level: 'info', destination: sink((s) => (log += s)) }).warn({ detail: msg }, msg);
  redactingStream(sink((s) => (out += s))).write(`${msg}\n`);
  return { log, out };
}

afterEach(() => {
  secretRedactor.release(secretRedactor.nextGeneration());
});

describe('redaction of echoes once missed', () => {
  it("CSV doubling of quotes: a secret holding `\"` in a CSV cell (`\"\"`), also in a JSON string", () => {
    for (const secret of ['pa"ss"w0rd', '"qu"0ted"']) {
      const csv = `name,password\r\nstore,"${secret.replace(/"/g, '""')}"\r\n`;
      for (const text of [csv, JSON.stringify({ body: csv })]) {
        const { log, out } = printed([secret], `service said: ${text}`);
        for (const p of [log, out]) {
          expect(p).toContain(REDACTED);
          expect(p).not.toMatch(/w0rd|qu|0ted/);
        }
      }
    }
    // a JSON echo of a value ending in `"` keeps its closing quote (no CSV form is taken for it)
    registerSecretsInForce('ends-in-quote"');
    expect(secretRedactor.redactJsonText(JSON.stringify({ msg: JSON.stringify({ pw: 'ends-in-quote"' }) }))).toBe(JSON.stringify({ msg: `{"pw":"${REDACTED}"}` }));
  });
});
