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

  it('CSV doubling of a `"` first or last in the secret: the cell reads `"[redacted]"`, no `"` of the secret beside it', () => {
    const cell = `"${REDACTED}"`;
    for (const secret of ['"0pen-quote9', 'cl0se-quote9"', '"b0th-ends9"', '""tw0-first9']) {
      const csv = (field: string): string => `name,password\r\nstore,${field}\r\n`;
      const echo = csv(`"${secret.replace(/"/g, '""')}"`);
      for (const [text, expected] of [
        [echo, csv(cell)],
        [JSON.stringify({ body: echo }), JSON.stringify({ body: csv(cell) })],
      ] as const) {
        const { log, out } = printed([secret], `service said: ${text}`);
        expect(out, secret).toBe(`service said: ${expected}\n`);
        expect((JSON.parse(log) as { msg: string }).msg, secret).toBe(`service said: ${expected}`);
      }
    }
  });

  it('a JSON string printed as text of a secret whose first or last `"` are two or more keeps its own quotes (no CSV form takes one)', () => {
    for (const secret of ['tw0-last9""', '""tw0-first9', '""b0th-ends9""', 'thr3e-last9"""']) {
      const text = JSON.stringify({ pw: secret, next: 'x' });
      const expected = JSON.stringify({ pw: REDACTED, next: 'x' });
      const { log, out } = printed([secret], `service said: ${text}`);
      expect(out, secret).toBe(`service said: ${expected}\n`);
      expect((JSON.parse(log) as { msg: string }).msg, secret).toBe(`service said: ${expected}`);
    }
  });

  it('Unicode normalization: a secret given in NFC printed in NFD, or the reverse, or in NFKC/NFKD, also encoded', () => {
    const nfc = 'pässwörd-Ünïcode9'.normalize('NFC');
    const compat = 'ﬁle-paß①２-ｋｅｙ';
    const cases: Array<[secret: string, printedAs: string]> = [
      [nfc, nfc.normalize('NFD')],
      [nfc.normalize('NFD'), nfc],
      [compat, compat.normalize('NFKC')],
      [compat, compat.normalize('NFKD')],
    ];
    for (const [secret, as] of cases) {
      expect(as).not.toBe(secret);
      for (const text of [as, encodeURIComponent(as), JSON.stringify({ pw: as }), Buffer.from(`user:${as}`).toString('base64')]) {
        const { log, out } = printed([secret], `service said: ${text}`);
        for (const p of [log, out]) {
          expect(p, `${secret} as ${text}`).toContain(REDACTED);
          expect(p).not.toMatch(/ss|rd|le-pa|ode9/);
        }
      }
    }
  });

  it('MIME-wrapped base64 (76 or 64 characters a line, CRLF or LF): a secret across a line break, at each offset mod 3', () => {
    const secret = 'Wr4pp3d-S3cret/value+9';
    for (const [width, eol] of [[76, '\r\n'], [76, '\n'], [64, '\n']] as const) {
      for (let pad = 0; pad < 3; pad++) {
        // the secret's bytes start at an offset of `pad` mod 3, its base64 a few characters before the second line break
        const doc = JSON.stringify({ kind: 'Integration', name: 'store', config: { pw: secret } });
        const start = 3 * Math.floor((2 * width) / 4) - 3 + pad;
        const body = `${'x'.repeat(start - doc.indexOf(secret))}${doc}`;
        const b64 = Buffer.from(body).toString('base64');
        const wrapped = b64.match(new RegExp(`.{1,${width}}`, 'g'))!.join(eol);
        // the secret's characters after the line break (its first, before it, are 1-4)
        const after = b64.slice(2 * width, Math.floor((8 * (start + secret.length)) / 6)).slice(0, 12);
        expect(Buffer.from(b64, 'base64').toString()).toContain(secret);
        const { log, out } = printed([secret], `attachment:${eol}${wrapped}${eol}--boundary--`);
        for (const p of [log, out]) {
          expect(p, `${width} ${JSON.stringify(eol)} ${pad}`).toContain(REDACTED);
          expect(p).not.toContain(after);
        }
      }
    }
  });

  it('base64 wrapped at a width that is no multiple of 4 (75, 70: `base64 -w 75`): a secret across a line break, at each offset mod 3', () => {
    const secret = 'Wr4pp3d-S3cret/value+9';
    for (const [width, eol] of [[75, '\n'], [75, '\r\n'], [70, '\n'], [70, '\r\n']] as const) {
      for (let pad = 0; pad < 3; pad++) {
        const doc = JSON.stringify({ kind: 'Integration', name: 'store', config: { pw: secret } });
        const start = 3 * Math.floor((2 * width) / 4) - 3 + pad;
        const body = `${'x'.repeat(start - doc.indexOf(secret))}${doc}`;
        const b64 = Buffer.from(body).toString('base64');
        const lines = b64.match(new RegExp(`.{1,${width}}`, 'g'))!;
        const after = b64.slice(2 * width, Math.floor((8 * (start + secret.length)) / 6)).slice(0, 12);
        // what follows the secret's characters, on the last line
        const tail = b64.slice(Math.ceil((8 * (start + secret.length)) / 6));
        const { log, out } = printed([secret], `attachment:${eol}${lines.join(eol)}${eol}--boundary--`);
        for (const p of [(JSON.parse(log) as { msg: string }).msg, out]) {
          expect(p, `${width} ${JSON.stringify(eol)} ${pad}`).toContain(REDACTED);
          expect(p).not.toContain(after);
          // only the secret's characters: the first line and what follows the secret stay, line breaks and all
          expect(p).toContain(`attachment:${eol}${lines[0]}${eol}`);
          expect(p).toContain(`${tail}${eol}--boundary--`);
        }
      }
    }
    // text whose lines end in base64 characters, joined in a view, holds no secret: printed as it is
    const prose = 'fetch failed for configuration/integrations/store\nretrying-with-backoff-after-timeout\nDone';
    const { log, out } = printed([secret], prose);
    expect(out).toBe(`${prose}\n`);
    expect(JSON.parse(log).msg).toBe(prose);
  });

  it('base64 wrapped over indented lines (a YAML block scalar, an indented log): a secret across a line break', () => {
    const secret = 'Wr4pp3d-S3cret/value+9';
    for (const indent of ['    ', '\t', '  \t']) {
      for (let pad = 0; pad < 3; pad++) {
        const b64 = Buffer.from(`${'x'.repeat(40 + pad)}${secret}${'y'.repeat(40)}`).toString('base64');
        const lines = b64.match(/.{1,64}/g)!;
        // the line break falls inside the secret's characters
        expect(Math.ceil((8 * (40 + pad)) / 6)).toBeLessThan(64);
        expect(Math.floor((8 * (40 + pad + secret.length)) / 6)).toBeGreaterThan(64);
        const { log, out } = printed([secret], `spec:\n  data: |\n${lines.map((l) => indent + l).join('\n')}\nend`);
        for (const p of [(JSON.parse(log) as { msg: string }).msg, out]) {
          expect(p, `${JSON.stringify(indent)} ${pad}`).toContain(REDACTED);
          expect(p).toContain('spec:\n  data: |\n');
          expect(p).toContain('\nend');
        }
      }
    }
    // indented prose whose lines end in base64 characters holds no secret: printed as it is
    const prose = 'steps:\n  fetch configuration/integrations/store\n  retrying-with-backoff-after-timeout\n  done';
    const { log, out } = printed([secret], prose);
    expect(out).toBe(`${prose}\n`);
    expect(JSON.parse(log).msg).toBe(prose);
  });

  it('a multi-line secret (a PEM key) printed with its lines indented, as in a YAML block: each of its lines redacted', () => {
    const body = ['MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7q3f9Zx0aBcDe', 'FgHiJkLmNoPqRsTuVwXyZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH', 'Zm9vYmFyYmF6'];
    const pem = ['-----BEGIN PRIVATE KEY-----', ...body, '-----END PRIVATE KEY-----'].join('\n');
    for (const eol of ['\n', '\r\n']) {
      const shown = `config:\n  privateKey: |\n${pem.split('\n').map((l) => `    ${l}`).join(eol)}\n  user: svc`;
      const { log, out } = printed([pem.split('\n').join(eol)], shown);
      for (const p of [(JSON.parse(log) as { msg: string }).msg, out]) {
        for (const line of body) expect(p, JSON.stringify(eol)).not.toContain(line);
        // the armour and the text around it stay: they are no secret
        expect(p).toContain('-----BEGIN PRIVATE KEY-----');
        expect(p).toContain('  user: svc');
      }
    }
    // a line of a multi-line secret with a space in it, or short, is not a form of its own (it may be ordinary text)
    const { out } = printed(['first line of it\nsecond-line-0f-the-secret-value\nok'], 'first line of it\nok');
    expect(out).toBe('first line of it\nok\n');
  });

  it('URL userinfo inside an escaped URL (JSON `\\/`, percent-encoded, HTML): the password is dropped, registered or not', () => {
    const secret = 'Pa55/w0rd@x';
    const url = (pw: string): string => `https://admin:${pw}@db.example.com/q`;
    const echoes = [
      JSON.stringify(url('n0tRegistered9')).replace(/\//g, '\\/'),
      encodeURIComponent(url('n0tRegistered9')),
      `href="${url('n0tRegistered9').replace(/:/g, '&#58;')}"`,
      encodeURIComponent(url(encodeURIComponent(secret))),
      JSON.stringify(url(encodeURIComponent(secret))).replace(/\//g, '\\/'),
    ];
    for (const e of echoes) {
      const { log, out } = printed([secret], `callback failed: ${e}`);
      for (const p of [log, out]) {
        expect(p, e).not.toMatch(/n0tRegistered9|Pa55|w0rd/);
        expect(p, e).toMatch(/db\.example\.com/);
      }
    }
  });

  it("a URL's own userinfo reads `***@` also in a text that has decoded views (a stack trace's `%`, `\\`)", () => {
    const { log, out } = printed(['other-secret'], 'late failure at https://user:pw-1234@db.example.com/x (50% done) C:\\tmp');
    for (const p of [log, out]) {
      expect(p).toContain('https://***@db.example.com/x');
      expect(p).not.toContain('pw-1234');
    }
  });

  it('a URL password of digits only before a `/` (read as a port): masked when it is a known secret, a real port kept', () => {
    for (const text of ['http://user:4321/path', JSON.stringify('http://user:4321/path').replace(/\//g, '\\/'), encodeURIComponent('http://user:4321/path')]) {
      const { log, out } = printed(['4321'], `fetch failed: ${text}`);
      for (const p of [log, out]) expect(p, text).not.toContain('4321');
    }
    const { log, out } = printed(['other-secret'], 'fetch failed: http://registry:4873/@scope/pkg http://host:8080/path');
    for (const p of [log, out]) expect(p).toContain('http://registry:4873/@scope/pkg http://host:8080/path');
  });
});
