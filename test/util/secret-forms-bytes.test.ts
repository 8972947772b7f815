/**
 * A secret in a list of its bytes (2026-11-28, fourth redaction audit): a service logging the body it read as bytes,
 * Node's util.inspect of a Buffer (`<Buffer 7b 22 70 …>`, an error's `Received <Buffer …>`), JSON.stringify of a Buffer
 * (`{"type":"Buffer","data":[123,34,…]}`), Go's `%v` of a []byte (`[123 34 112 …]`), Python's `list(body)`. Each was
 * printed before, in a message the service sent.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED } from '../../src/util/redact.js';

const VALUE = 'Zq8#tW3$ pé';
const bytes = [...Buffer.from(`{"password":"${VALUE}"}`)];
const own = [...Buffer.from(VALUE)];

describe('a list of bytes', () => {
  for (const [who, written, ofValue] of [
    ["Node's util.inspect of a Buffer", `<Buffer ${bytes.map((b) => b.toString(16).padStart(2, '0')).join(' ')}>`, own.map((b) => b.toString(16).padStart(2, '0')).join(' ')],
    ['JSON.stringify of a Buffer', JSON.stringify(Buffer.from(`{"password":"${VALUE}"}`)), own.join(',')],
    ["Go's %v of a []byte", `[${bytes.join(' ')}]`, own.join(' ')],
    ["Python's list(body)", `[${bytes.join(', ')}]`, own.join(', ')],
  ] as const) {
    it(`as ${who} writes it, in a service's message`, () => {
      const r = new Redactor();
      r.add(VALUE);
      expect(written).toContain(ofValue);
      const message = `invalid request body: ${written}`;
      const out = r.redactText(message);
      expect(out).toBe(message.replace(ofValue, REDACTED));
      const line = JSON.stringify({ level: 50, msg: 'service said', error: message });
      expect(JSON.parse(r.redactJsonText(line))).toEqual({ level: 50, msg: 'service said', error: message.replace(ofValue, REDACTED) });
    });
  }

  it('a short value has no byte-list form that ordinary numbers could hold', () => {
    const r = new Redactor();
    r.add('abcd');
    expect(r.redactText('ports 97 98 99 100 and 61 62 63 64')).toBe('ports 97 98 99 100 and 61 62 63 64');
  });
});
