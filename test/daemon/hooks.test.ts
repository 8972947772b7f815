import { describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { eventKind, githubSignature, parsePayload, precheckPush, safeEqual, verifyPush } from '../../src/daemon/hooks.js';

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
      kind: 'push',
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

describe('what a verified notification asks for', () => {
  it('only push (GitHub) and Push Hook (GitLab) are pushes (a Tag Push Hook moves no branch); ping is ping; the rest is ignored', () => {
    expect(eventKind('github', 'push')).toBe('push');
    expect(eventKind('github', 'ping')).toBe('ping');
    for (const e of ['issues', 'pull_request', 'release', undefined]) expect(eventKind('github', e)).toBe('other');
    expect(eventKind('gitlab', 'Push Hook')).toBe('push');
    expect(eventKind('gitlab', 'Tag Push Hook')).toBe('other');
    for (const e of ['Merge Request Hook', 'Note Hook', 'push']) expect(eventKind('gitlab', e)).toBe('other');
  });

  it('reads the ref of a JSON body and of a form-encoded GitHub delivery; anything else is malformed', () => {
    expect(parsePayload('application/json', body)).toEqual({ ok: true, ref: 'refs/heads/main' });
    const form = Buffer.from(`payload=${encodeURIComponent(JSON.stringify({ ref: 'refs/heads/dev' }))}`);
    expect(parsePayload('application/x-www-form-urlencoded', form)).toEqual({ ok: true, ref: 'refs/heads/dev' });
    expect(parsePayload('application/json', Buffer.from('{not json'))).toMatchObject({ ok: false });
    expect(parsePayload('application/json', Buffer.from(''))).toMatchObject({ ok: false });
    expect(parsePayload('application/json', Buffer.from('[1]'))).toMatchObject({ ok: false });
    expect(parsePayload('application/x-www-form-urlencoded', Buffer.from('other=1'))).toMatchObject({ ok: false });
    expect(parsePayload('application/x-www-form-urlencoded', Buffer.from('payload=%7Bbroken'))).toMatchObject({ ok: false });
  });

  it('a signed but malformed body, or one without its event header, is flagged (answered 400)', () => {
    const bad = Buffer.from('{"ref": ');
    expect(verifyPush({ 'x-hub-signature-256': githubSignature(secret, bad), 'x-github-event': 'push' }, bad, secret)).toMatchObject({ ok: true, malformed: expect.any(String) });
    expect(verifyPush({ 'x-hub-signature-256': githubSignature(secret, body) }, body, secret)).toMatchObject({ ok: true, malformed: 'no X-GitHub-Event header' });
    expect(verifyPush({ 'x-gitlab-token': secret }, body, secret)).toMatchObject({ ok: true, malformed: 'no X-Gitlab-Event header' });
  });

  it('decides from the headers alone when it can: GitLab is authenticated before its body is read, GitHub is not', () => {
    expect(precheckPush({ 'x-gitlab-token': secret }, secret)).toEqual({ ok: true, provider: 'gitlab', authenticated: true });
    expect(precheckPush({ 'x-gitlab-token': 'nope' }, secret)).toMatchObject({ ok: false });
    expect(precheckPush({ 'x-hub-signature-256': 'sha256=00' }, secret)).toEqual({ ok: true, provider: 'github', authenticated: false });
    expect(precheckPush({}, secret)).toMatchObject({ ok: false });
    expect(precheckPush({ 'x-hub-signature-256': 'sha256=00' }, undefined)).toMatchObject({ ok: false });
  });
});
