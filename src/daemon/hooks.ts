/**
 * Push notifications (`POST /hooks/git`): verify a GitHub (`X-Hub-Signature-256: sha256=<hex hmac
 * of the raw body>`) or GitLab (`X-Gitlab-Token: <secret>`) request against the configured secret,
 * then read what it asks for. Pure; every comparison is constant-time.
 *
 * Only a push to the followed branch triggers a fetch: GitHub `push` and GitLab `Push Hook` of a
 * `refs/heads/` ref (`followsRef`); a tag push (GitLab `Tag Push Hook`, GitHub `push` of `refs/tags/...`)
 * changes no branch. GitHub's `ping` is answered without one; other events are acknowledged and ignored. A signed body that is
 * not a JSON (or GitHub form-encoded `payload=`) document is malformed (400).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export type HookEvent = 'push' | 'ping' | 'other';

export type HookVerdict =
  | {
      ok: true;
      provider: 'github' | 'gitlab';
      event?: string;
      /** What the event asks for: only `push` triggers a fetch. */
      kind: HookEvent;
      ref?: string;
      /** Set when the body is not a push payload govops can read: answered 400. */
      malformed?: string;
    }
  | { ok: false; reason: string };

/** What can be decided from the headers alone, before reading a body. */
export type HookPrecheck =
  | { ok: false; reason: string }
  /** GitLab: the token is in a header, so the request is authenticated before its body is read. */
  | { ok: true; provider: 'gitlab'; authenticated: true }
  /** GitHub: the signature covers the body; it is an unauthenticated upload until checked. */
  | { ok: true; provider: 'github'; authenticated: false };

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

const NO_SECRET = 'no webhook secret configured (--git-webhook-secret / GOVOPS_GIT_WEBHOOK_SECRET)';

/** The decision the headers allow before any byte of the body is read. */
export function precheckPush(headers: IncomingHttpHeaders, secret: string | undefined): HookPrecheck {
  if (!secret) return { ok: false, reason: NO_SECRET };
  if (header(headers, 'x-hub-signature-256') !== undefined) return { ok: true, provider: 'github', authenticated: false };
  const gitlab = header(headers, 'x-gitlab-token');
  if (gitlab !== undefined) {
    return safeEqual(gitlab, secret) ? { ok: true, provider: 'gitlab', authenticated: true } : { ok: false, reason: 'bad X-Gitlab-Token' };
  }
  return { ok: false, reason: 'no X-Hub-Signature-256 or X-Gitlab-Token header' };
}

/** What an event name asks for. */
export function eventKind(provider: 'github' | 'gitlab', event: string | undefined): HookEvent {
  if (provider === 'github') return event === 'push' ? 'push' : event === 'ping' ? 'ping' : 'other';
  return event === 'Push Hook' ? 'push' : 'other';
}

/**
 * Does a push of `ref` move what the daemon follows? Only a branch (`refs/heads/...`), and with `branch` set only
 * that branch; a tag or any other ref never does. A push without a ref (a `--dir` rescan trigger) does.
 */
export function followsRef(ref: string | undefined, branch: string | undefined): boolean {
  if (ref === undefined) return true;
  if (!ref.startsWith('refs/heads/')) return false;
  return !branch || ref === `refs/heads/${branch}`;
}

/**
 * The `ref` of a push payload: a JSON body, or GitHub's form encoding (`payload=<url-encoded JSON>`).
 * A body that is neither is malformed.
 */
export function parsePayload(contentType: string | undefined, raw: Buffer): { ok: true; ref?: string } | { ok: false; reason: string } {
  const text = raw.toString('utf8');
  let json = text;
  if (/application\/x-www-form-urlencoded/i.test(contentType ?? '')) {
    const payload = new URLSearchParams(text).get('payload');
    if (payload === null) return { ok: false, reason: 'form-encoded body without a payload field' };
    json = payload;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'body is not a JSON document (nor a form-encoded payload)' };
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { ok: false, reason: 'body is not a JSON object' };
  const ref = (doc as { ref?: unknown }).ref;
  return typeof ref === 'string' ? { ok: true, ref } : { ok: true };
}

export function verifyPush(headers: IncomingHttpHeaders, rawBody: Buffer, secret: string | undefined): HookVerdict {
  const pre = precheckPush(headers, secret);
  if (!pre.ok) return pre;
  if (pre.provider === 'github') {
    const sig = header(headers, 'x-hub-signature-256')!;
    if (!safeEqual(sig.trim().toLowerCase(), githubSignature(secret!, rawBody))) return { ok: false, reason: 'bad X-Hub-Signature-256' };
  }
  const event = header(headers, pre.provider === 'github' ? 'x-github-event' : 'x-gitlab-event');
  const verdict: HookVerdict = { ok: true, provider: pre.provider, kind: eventKind(pre.provider, event) };
  if (event !== undefined) verdict.event = event;
  if (event === undefined) {
    verdict.malformed = `no ${pre.provider === 'github' ? 'X-GitHub-Event' : 'X-Gitlab-Event'} header`;
    return verdict;
  }
  const payload = parsePayload(header(headers, 'content-type'), rawBody);
  if (!payload.ok) verdict.malformed = payload.reason;
  else if (payload.ref !== undefined) verdict.ref = payload.ref;
  return verdict;
}
