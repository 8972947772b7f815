import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { githubSignature, safeEqual, verifyPush } from '../../src/daemon/hooks.js';

const secret = 'hook-s3cret';
const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: 'abc' }));

describe('push notification verification', () => {
  it('accepts a GitHub push signed with HMAC-SHA256 of the raw body', () => {
    const sig = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(githubSignature(secret, body)).toBe(sig);
    expect(verifyPush({ 'x-hub-signature-256': sig, 'x-github-event': 'push' }, body, secret)).toEqual({
      ok: true,
      provider: 'github',
      event: 'push',
      ref: 'refs/heads/main',
    });
  });

  it('rejects a wrong or stale GitHub signature, and a tampered body', () => {
    expect(verifyPush({ 'x-hub-signature-256': githubSignature('other', body) }, body, secret).ok).toBe(false);
    expect(verifyPush({ 'x-hub-signature-256': 'sha256=' }, body, secret).ok).toBe(false);
    const tampered = Buffer.from(body.toString().replace('abc', 'abd'));
    expect(verifyPush({ 'x-hub-signature-256': githubSignature(secret, body) }, tampered, secret).ok).toBe(false);
  });

  it('accepts GitLab only with the exact token', () => {
    expect(verifyPush({ 'x-gitlab-token': secret, 'x-gitlab-event': 'Push Hook' }, body, secret)).toMatchObject({ ok: true, provider: 'gitlab' });
    expect(verifyPush({ 'x-gitlab-token': `${secret}x` }, body, secret).ok).toBe(false);
    expect(verifyPush({ 'x-gitlab-token': secret.slice(0, -1) }, body, secret).ok).toBe(false);
  });

  it('rejects unsigned requests and everything when no secret is configured', () => {
    expect(verifyPush({}, body, secret).ok).toBe(false);
    expect(verifyPush({ 'x-gitlab-token': '' }, body, undefined).ok).toBe(false);
    expect(verifyPush({ 'x-hub-signature-256': githubSignature('', body) }, body, '').ok).toBe(false);
  });

  it('compares in constant time regardless of length', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
