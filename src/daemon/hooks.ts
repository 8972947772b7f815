/**
 * Push notifications (`POST /hooks/git`): verify a GitHub (`X-Hub-Signature-256: sha256=<hex hmac
 * of the raw body>`) or GitLab (`X-Gitlab-Token: <secret>`) request against the configured secret.
 * Pure; every comparison is constant-time.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export type HookVerdict =
  | { ok: true; provider: 'github' | 'gitlab'; event?: string; ref?: string }
  | { ok: false; reason: string };

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Constant-time string equality (hashing first makes the lengths equal). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}

export function githubSignature(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function verifyPush(headers: IncomingHttpHeaders, rawBody: Buffer, secret: string | undefined): HookVerdict {
  if (!secret) return { ok: false, reason: 'no webhook secret configured (--git-webhook-secret / GOVOPS_GIT_WEBHOOK_SECRET)' };
  const sig = header(headers, 'x-hub-signature-256');
  const gitlab = header(headers, 'x-gitlab-token');
  let verdict: HookVerdict;
  if (sig !== undefined) {
    verdict = safeEqual(sig.trim().toLowerCase(), githubSignature(secret, rawBody))
      ? { ok: true, provider: 'github', event: header(headers, 'x-github-event') }
      : { ok: false, reason: 'bad X-Hub-Signature-256' };
  } else if (gitlab !== undefined) {
    verdict = safeEqual(gitlab, secret)
      ? { ok: true, provider: 'gitlab', event: header(headers, 'x-gitlab-event') }
      : { ok: false, reason: 'bad X-Gitlab-Token' };
  } else {
    return { ok: false, reason: 'no X-Hub-Signature-256 or X-Gitlab-Token header' };
  }
  if (verdict.ok) {
    try {
      const payload = JSON.parse(rawBody.toString('utf8')) as { ref?: unknown };
      if (typeof payload.ref === 'string') verdict.ref = payload.ref;
    } catch {
      // Form-encoded or empty bodies are fine: a verified request triggers a fetch either way.
    }
  }
  return verdict;
}
