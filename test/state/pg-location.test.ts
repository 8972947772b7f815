/**
 * A PostgreSQL state URL's password is registered with the redactor when the URL is read (docs/deploy.md), however
 * the URL gives it: in its userinfo, or as the `password` / `sslpassword` parameter the driver (like libpq) also reads
 * (`postgres://govops@db/govops?password=…`), and a password with a `%` that is no escape (the driver takes it as it is).
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors.js';
import { checkStateLocation, parsePgLocation } from '../../src/state/location.js';
import { redactText } from '../../src/util/redact.js';

describe('PostgreSQL state URL: the password goes to the redactor', () => {
  it('a password given as the password or sslpassword parameter is registered', () => {
    const loc = parsePgLocation('postgres://govops@db.example:5432/govops?password=qp-Secret-7781&sslpassword=kp-Secret-9924#production');
    expect(loc.key).toBe('production');
    expect(loc.display).toBe('postgres db.example:5432/govops key production');
    const out = redactText('state at postgres://govops@db.example:5432/govops?password=qp-Secret-7781&sslpassword=kp-Secret-9924');
    expect(out).not.toContain('qp-Secret-7781');
    expect(out).not.toContain('kp-Secret-9924');
  });

  it('a password with a % that is no escape is registered, not an internal URIError', () => {
    let err: unknown;
    try {
      parsePgLocation('postgres://govops:pc-Secret%zz-4410@db.example/govops');
    } catch (e) {
      err = e;
    }
    expect(err).toBeUndefined();
    expect(redactText('pc-Secret%zz-4410')).not.toContain('pc-Secret');
  });

  it('a state key with a % that is no escape is a typed refusal', () => {
    expect(() => parsePgLocation('postgres://govops@db.example/govops#bad%zz')).toThrow(expect.objectContaining({ code: ErrorCode.userError }) as Error);
  });
});

describe('a state location written as another URL', () => {
  it('is refused naming its scheme without a wrong article ("a https://")', () => {
    for (const scheme of ['https', 'http', 's3', 'ftp', 'mysql', 'redis']) {
      let err: Error | undefined;
      try {
        checkStateLocation(`${scheme}://host/x`, '--state');
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toBe(`--state is a URL with the scheme ${scheme}://: the state is a file path or a postgres:// (postgresql://) URL`);
    }
  });
});
