/** The one redactor: every form an echo can take, JSON kept valid, streams keep their other properties. */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Redactor, REDACTED, redactingStream, secretForms } from '../../src/util/redact.js';

const SECRET = 'zq"xv w/ü+&=%';

describe('Redactor', () => {
  it('replaces a value as is, JSON-escaped (once, twice, ASCII-only, \\/), URL-encoded (every variant) and combinations', () => {
    const r = new Redactor();
    r.add(SECRET);
    const json = JSON.stringify({ password: SECRET });
    const texts = [
      `as is: ${SECRET}`,
      `json: ${json}`,
      `twice: ${JSON.stringify(json)}`,
      `ascii: ${JSON.stringify(SECRET).replace(/ü/, '\\u00fc')}`,
      `slashes: ${JSON.stringify(SECRET).replace(/\//g, '\\/')}`,
      `uri: ${encodeURIComponent(SECRET)}`,
      `lower: ${encodeURIComponent(SECRET).toLowerCase()}`,
      `form: ${new URLSearchParams({ p: SECRET }).toString()}`,
      `encodeURI: ${encodeURI(SECRET)}`,
      `encoded json: ${encodeURIComponent(json)}`,
      `json of encoded json: ${JSON.stringify(encodeURIComponent(json))}`,
    ];
    for (const t of texts) {
      const out = r.redactText(t);
      expect(out, t).toContain(REDACTED);
      expect(out, t).not.toMatch(/zq.{0,12}xv/);
    }
    expect(secretForms(SECRET).length).toBeGreaterThan(20);
  });

  it('strips URL userinfo; ignores values shorter than 4 characters', () => {
    const r = new Redactor();
    r.add('abc', '', undefined);
    expect(r.size).toBe(0);
    expect(r.redactText("fatal: unable to access 'https://x-access-token:ghp_123@github.com/o/r.git/'")).toBe(
      "fatal: unable to access 'https://***@github.com/o/r.git/'",
    );
  });

  it('JSON text stays valid JSON: only string literals change, never numbers or keys outside strings', () => {
    const r = new Redactor();
    r.add('1234', SECRET);
    const doc = { id: 1234, note: 'pin 1234', nested: { message: `echo ${JSON.stringify({ password: SECRET })}` }, list: [SECRET] };
    const out = r.redactJsonText(JSON.stringify(doc, null, 2));
    const back = JSON.parse(out) as typeof doc;
    expect(back.id).toBe(1234);
    expect(back.note).toBe(`pin ${REDACTED}`);
    expect(back.nested.message).not.toContain('zq');
    expect(back.list).toEqual([REDACTED]);
    // Prometheus label values are string literals too.
    const label = JSON.stringify(SECRET).slice(1, -1); // exposition escapes \\ and " as JSON does
    expect(r.redactJsonText(`govops_x{revision="${label}"} 1234\n`)).toBe(`govops_x{revision="${REDACTED}"} 1234\n`);
  });

  it('keys are structure, never redacted: a secret `cred` leaves the key `config.credential` as it is (issue 22)', () => {
    const r = new Redactor();
    r.add('cred');
    const out = JSON.parse(r.redactJsonText(JSON.stringify({ 'config.credential': 'x', note: 'a cred b', nested: { 'cred' : 'cred' } }, null, 2))) as Record<string, unknown>;
    expect(out).toEqual({ 'config.credential': 'x', note: `a ${REDACTED} b`, nested: { cred: REDACTED } });
  });

  it('a large JSON document is redacted wherever a value or URL userinfo sits in it, and returned as it is when none does', () => {
    const r = new Redactor();
    r.add(SECRET, 'tok-1234');
    const doc = { changes: Array.from({ length: 2000 }, (_, i) => ({ name: `m-${i}`, url: `https://h-${i}.example.com/x`, n: i })) };
    const clean = JSON.stringify(doc, null, 2);
    expect(r.redactOutput(clean)).toBe(clean);
    expect(r.redactJsonText(clean)).toBe(clean);
    for (const [where, value] of [
      [1999, 'tok-1234'],
      [0, `pre ${SECRET} post`],
      [1000, 'https://user:pw@db.example.com/x'],
    ] as const) {
      const dirty = JSON.stringify({ ...doc, changes: doc.changes.map((c, i) => (i === where ? { ...c, url: value } : c)) }, null, 2);
      for (const out of [r.redactOutput(dirty), r.redactJsonText(dirty)]) {
        expect(out).not.toBe(dirty);
        expect(out).not.toContain('tok-1234');
        expect(out).not.toContain('user:pw@');
        expect(out).not.toContain(JSON.stringify(SECRET).slice(1, -1));
        expect(JSON.parse(out).changes).toHaveLength(2000);
      }
    }
  });

  it('with thousands of values in force (a daemon with a credential per integration), each is still redacted in every form', () => {
    const r = new Redactor();
    const values = Array.from({ length: 3000 }, (_, i) => `pw/${i}+${(i * 7919).toString(36)} ü&"`);
    r.inForce(...values);
    r.add('tok-1234');
    for (const v of [values[0]!, values[1500]!, values.at(-1)!]) {
      const line = JSON.stringify({ level: 50, msg: `service said: ${JSON.stringify({ password: v })}`, url: `https://h.example.com/?p=${encodeURIComponent(v)}` });
      const out = r.redactJsonText(line);
      expect(JSON.parse(out)).toEqual({ level: 50, msg: `service said: {"password":"${REDACTED}"}`, url: `https://h.example.com/?p=${REDACTED}` });
      expect(r.redactText(`as is: ${v}; form: ${new URLSearchParams({ p: v }).toString()}`)).toBe(`as is: ${REDACTED}; form: p=${REDACTED}`);
    }
    const clean = JSON.stringify({ level: 30, msg: 'applied', name: 'pw/1' });
    expect(r.redactOutput(clean)).toBe(clean);
    expect(r.redactText('tok-1234')).toBe(REDACTED);
    // Released values are no longer replaced; the others still are.
    r.nextGeneration();
    r.inForce(values[0]);
    r.release(r.generation);
    expect(r.redactText(values[0]!)).toBe(REDACTED);
    expect(r.redactText(values[1]!)).toBe(values[1]);
    expect(r.size).toBe(2);
  });

  it('a redacting stream redacts writes (JSON documents keep their shape) and keeps isTTY and the rest', () => {
    const r = new Redactor();
    r.add('s3cret-value');
    const sink = new PassThrough();
    Object.assign(sink, { isTTY: true });
    const chunks: string[] = [];
    sink.on('data', (d: Buffer) => chunks.push(d.toString()));
    const out = redactingStream(sink as unknown as NodeJS.WriteStream, r);
    expect((out as NodeJS.WriteStream).isTTY).toBe(true);
    out.write('error: service said s3cret-value\n');
    out.write(`${JSON.stringify({ n: 1, e: 'x s3cret-value' }, null, 2)}\n`);
    out.write(Buffer.from('buffer s3cret-value\n'));
    const all = chunks.join('');
    expect(all).not.toContain('s3cret-value');
    expect(JSON.parse(chunks[1]!)).toEqual({ n: 1, e: `x ${REDACTED}` });
  });
});

describe('Redactor: values a manifest\'s author chose', () => {
  it('are replaced in every pass but the operator-scoped one; a value also registered otherwise is the operator\'s', () => {
    const r = new Redactor();
    r.inForce('operator-secret-1');
    r.inForceAuthored('authored-secret', 'shared-value-9');
    r.inForce('shared-value-9');
    const text = 'a operator-secret-1 b authored-secret c shared-value-9';
    expect(r.redactText(text)).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
    expect(r.redactOutput(text)).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
    expect(r.redactOutput(text, 'operator')).toBe(`a ${REDACTED} b authored-secret c ${REDACTED}`);
    expect(r.redactJsonText(JSON.stringify({ v: text }), 'operator')).toBe(JSON.stringify({ v: `a ${REDACTED} b authored-secret c ${REDACTED}` }));
    // registered as the operator's later, or for the process's life: the operator's from then on
    r.add('authored-secret');
    expect(r.redactOutput(text, 'operator')).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
  });

  it('an author\'s "secret" overlapping the operator\'s in a text neither uncovers it nor tells a right guess of its characters from a wrong one', () => {
    // A pull request's literal credentials are the author's values (any number of them, under unknown config keys);
    // an echo of a dry run's body holds the operator's secret right after a key. A literal `","secretKey":"O` matched
    // first, and the rest of the operator's value was printed after it; replacing overlapping matches as one instead
    // would swallow the text around the secret exactly when the guess of its first (or last) characters is right.
    const OPERATOR = 'Op3r4torSecretValue-91';
    const body = JSON.stringify({ type: 'columnar_warehouse', config: { sessionToken: 'x', secretKey: OPERATOR } });
    const texts = [`rejected: ${body}`, JSON.stringify({ message: `rejected: ${body}` })];
    const outputs = (authored: string, many: boolean): string[] => {
      const r = new Redactor();
      r.inForce(OPERATOR);
      r.inForceAuthored(authored);
      // above the matcher's regular-expression limit its head index is used: same answer
      if (many) for (let i = 0; i < 300; i++) r.inForce(`filler-secret-${i}`);
      return texts.flatMap((t) => [r.redactText(t), r.redactJsonText(t), r.redactOutput(t)]);
    };
    for (const many of [false, true]) {
      for (const [right, wrong] of [
        ['","secretKey":"O', '","secretKey":"Q'],
        ['","secretKey":"Op3', '","secretKey":"Op4'],
        ['-91"}}', '-92"}}'],
        ['e-91\\"}}', 'e-92\\"}}'],
      ] as const) {
        const got = outputs(right, many);
        for (const out of got) {
          expect(out).not.toContain('p3r4torSecretValue');
          expect(out).toContain(REDACTED);
        }
        expect(got).toEqual(outputs(wrong, many));
      }
    }
  });

  it('overlapping values of the operator are replaced as one; touching ones stay two replacements', () => {
    const r = new Redactor();
    r.inForce('abcd-1234', 'efgh-5678', '1234-efgh');
    expect(r.redactText('<abcd-1234efgh-5678>')).toBe(`<${REDACTED}${REDACTED}>`);
    r.add('XYZW-abcd');
    expect(r.redactText('<XYZW-abcd-1234>')).toBe(`<${REDACTED}>`);
  });

  it('a released authored value is gone from both passes; registering it again as authored keeps it the author\'s', () => {
    const r = new Redactor();
    r.inForceAuthored('authored-secret');
    r.nextGeneration();
    r.release(1);
    expect(r.redactText('authored-secret')).toBe('authored-secret');
    r.inForceAuthored('authored-secret');
    expect(r.redactText('authored-secret')).toBe(REDACTED);
    expect(r.redactOutput('authored-secret', 'operator')).toBe('authored-secret');
  });

  it('a stream can be scoped to the operator\'s values', async () => {
    const r = new Redactor();
    r.inForce('operator-secret-1');
    r.inForceAuthored('authored-secret');
    const sink = new PassThrough();
    const chunks: string[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c.toString()));
    redactingStream(sink, r, 'operator').write('operator-secret-1 authored-secret');
    await new Promise((done) => setImmediate(done));
    expect(chunks.join('')).toBe(`${REDACTED} authored-secret`);
  });

  it('a JSON value remembered with its redaction is redacted again once the values in force change, and per scope', () => {
    const r = new Redactor();
    r.add('operator-value-1');
    const text = JSON.stringify({ a: 'x\\u0041 later-value-22 %41', b: 'authored-value-3 y&amp;' });
    expect(r.redactJsonText(text)).toBe(text);
    r.inForce('later-value-22');
    expect(JSON.parse(r.redactJsonText(text))).toEqual({ a: `x\\u0041 ${REDACTED} %41`, b: 'authored-value-3 y&amp;' });
    r.inForceAuthored('authored-value-3');
    expect(JSON.parse(r.redactJsonText(text))).toEqual({ a: `x\\u0041 ${REDACTED} %41`, b: `${REDACTED} y&amp;` });
    expect(JSON.parse(r.redactJsonText(text, 'operator'))).toEqual({ a: `x\\u0041 ${REDACTED} %41`, b: 'authored-value-3 y&amp;' });
    expect(JSON.parse(r.redactJsonText(text))).toEqual({ a: `x\\u0041 ${REDACTED} %41`, b: `${REDACTED} y&amp;` });
    r.nextGeneration();
    r.release(1);
    expect(r.redactJsonText(text)).toBe(text);
  });
});

describe('Redactor: a JSON string literal of a value starting or ending in `""`, redacted as text', () => {
  it("keeps the literal's own quotes (the value's CSV form in the decoded view does not take them)", () => {
    for (const s of ['abcd""', '""abcd', '"abcd"', 'ab"cd""']) {
      const r = new Redactor();
      r.add(s);
      const text = JSON.stringify({ p: s });
      expect(r.redactText(text), text).toBe(`{"p":"${REDACTED}"}`);
      expect(r.redactJsonText(text), text).toBe(`{"p":"${REDACTED}"}`);
    }
  });
});

describe('Redactor: the values in force change in place', () => {
  // Values that share forms (one is another's encoding: `pw%22x%26y`, `pw\"x&amp;y`; one the other's normalization:
  // NFC and NFD), start or end in `"` (framed forms), hold escapes; each may be the operator's, an author's or both.
  const values = ['pw"x&y', '"pw"x&y"', 'pw%22x%26y', 'pw\\"x&amp;y', 'tok-1234-ab', 'p\u00e4ss-w\u00f6rd', 'pa\u0308ss-wo\u0308rd', '"quoted"'];
  type Op = { kind: 'add' | 'inForce' | 'inForceAuthored'; value: number } | { kind: 'next' } | { kind: 'release'; back: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constantFrom('add' as const, 'inForce' as const, 'inForceAuthored' as const), value: fc.nat(values.length - 1) }),
    fc.constant({ kind: 'next' as const }),
    fc.record({ kind: fc.constant('release' as const), back: fc.nat(2) }),
  );
  const apply = (r: Redactor, o: Op): void => {
    if (o.kind === 'next') r.nextGeneration();
    else if (o.kind === 'release') r.release(r.generation - o.back);
    else r[o.kind](values[o.value]);
  };
  const texts = values.flatMap((v) => [`said ${v}.`, JSON.stringify({ m: `echo ${JSON.stringify({ p: v })}` }), `u=${encodeURIComponent(v)}`, `csv,"${v.replace(/"/g, '""')}",x`]);

  it('redacts, after every change, exactly what a redactor given the same registrations at once redacts', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 14 }), (ops) => {
        const live = new Redactor();
        const done: Op[] = [];
        for (const o of ops) {
          apply(live, o);
          done.push(o);
          // used after each change (its matchers follow the change); the other made of the same registrations, used once
          const once = new Redactor();
          for (const d of done) apply(once, d);
          for (const t of texts) {
            expect(live.redactText(t), t).toBe(once.redactText(t));
            expect(live.redactOutput(t, 'operator'), t).toBe(once.redactOutput(t, 'operator'));
          }
        }
      }),
      { numRuns: 40 },
    );
  });
});

