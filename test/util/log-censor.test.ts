/**
 * The logger never writes the value of a secret key (password, token, authorization, ... and every masked
 * credential key of the integration kinds), at any depth: in the logged object, in a child's bindings and in what
 * the error serializer made of an error; in JSON, text and pretty-less output alike. Values under other keys, and
 * the words themselves in messages, are left as they are.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CENSOR, censorSecretKeys, createLogger, SECRET_LOG_KEYS } from '../../src/log.js';

function sink() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, destination };
}

describe('log lines: secret keys censored', () => {
  it('in the logged object at any depth, in arrays, in child bindings and in a serialized error', () => {
    const { lines, destination } = sink();
    const log = createLogger({ level: 'debug', destination });
    const deep = { a: { b: { c: { d: { e: { f: { password: 'pw-deep-1' } } } } } } };
    log.info({ config: { host: 'h', password: 'pw-1' }, items: [{ token: 'tok-2' }, { name: 'ok' }], deep }, 'with secrets');
    log.child({ headers: { authorization: 'Bearer tok-3', Authorization: 'Bearer tok-4' } }).warn('from a child');
    const err = Object.assign(new Error('refused'), { body: { secret: 'sec-5', detail: 'kept' } });
    log.error({ err }, 'failed');
    const all = lines.join('\n');
    for (const v of ['pw-deep-1', 'pw-1', 'tok-2', 'tok-3', 'tok-4', 'sec-5']) expect(all).not.toContain(v);
    const [first, second, third] = lines.map((l) => JSON.parse(l));
    expect(first.config).toEqual({ host: 'h', password: CENSOR });
    expect(first.items).toEqual([{ token: CENSOR }, { name: 'ok' }]);
    expect(first.deep.a.b.c.d.e.f).toEqual({ password: CENSOR });
    expect(first.msg).toBe('with secrets');
    expect(second.headers).toEqual({ authorization: CENSOR, Authorization: CENSOR });
    expect(third.err.body).toEqual({ secret: CENSOR, detail: 'kept' });
    expect(third.err.message).toBe('refused');
  });

  it('leaves lines without a secret key as they are, and the words in values and messages', () => {
    const { lines, destination } = sink();
    const log = createLogger({ level: 'info', destination });
    log.info({ note: 'password reset', field: 'token' }, 'the password was rotated');
    expect(JSON.parse(lines[0]!)).toMatchObject({ note: 'password reset', field: 'token', msg: 'the password was rotated' });
    const line = '{"level":30,"msg":"x \\"password\\": y"}\n';
    expect(censorSecretKeys(line)).toBe(line);
  });

  it('text output is censored too', () => {
    const { lines, destination } = sink();
    createLogger({ level: 'info', destination, text: { color: false } }).info({ config: { clientSecret: 'cs-6' } }, 'x');
    expect(lines.join('\n')).not.toContain('cs-6');
    expect(lines.join('\n')).toContain(CENSOR);
  });

  it('every masked credential key of the integration kinds is a secret key, and its lower-case form', () => {
    for (const k of ['password', 'secret', 'token', 'authorization', 'adminToken', 'admintoken', 'userToken']) expect(SECRET_LOG_KEYS.has(k)).toBe(true);
    const line = `${JSON.stringify({ level: 30, a: Object.fromEntries([...SECRET_LOG_KEYS].map((k) => [k, 'v-7'])) })}\n`;
    const out = censorSecretKeys(line);
    expect(out.endsWith('\n')).toBe(true);
    expect(out).not.toContain('v-7');
  });

  it('a line that names a secret key but is not JSON, or is nested too deep to walk, is withheld, not printed', () => {
    const out = censorSecretKeys('{"password": "pw-8", oops\n');
    expect(out).not.toContain('pw-8');
    expect(JSON.parse(out)).toMatchObject({ level: 50 });
    const deep = `{"a":${'['.repeat(200_000)}{"password":"pw-9"}${']'.repeat(200_000)}}\n`;
    const withheld = censorSecretKeys(deep);
    expect(withheld).not.toContain('pw-9');
    expect(withheld.endsWith('\n')).toBe(true);
  });
});
