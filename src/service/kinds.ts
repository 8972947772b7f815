/**
 * Facts about the service's integrations that hold for every kind (the mask, script phases, host names,
 * statuses), shared by sandbox, planner and applier. What differs per kind lives in its module under
 * src/kinds/ (the registry: src/kinds/registry.ts); field shapes and defaults in schemas/.
 */
import { createHmac } from 'node:crypto';
import { hasUrlUserinfo } from '../util/url-userinfo.js';

/** The fixed string the service puts in place of every credential field it returns. */
export const MASK = '********';

/**
 * A run of mask characters, a bracketed word a service writes in place of a value it hides (`[REDACTED]`, `<hidden>`),
 * or the bare word `REDACTED`. A bare `sensitive`, `secret`, `hidden` or `masked` is a value (a schema, a catalog, a
 * group may be named so): read as hidden, a drift to it was never seen.
 */
const MASKED_FORM = /[*\u2022\u25cf]{3}|^\s*(?:[[(<{]+\s*(?:redacted|hidden|masked|sensitive|secret)\s*[\])>}]+|redacted)\s*$/i;

/**
 * Whether a value the service returned looks like a value it hides: the interface's mask, a run of three or more
 * mask characters (`****`, `EXAM****`, `•••`), a bracketed word (`[REDACTED]`, `<hidden>`) or `REDACTED`. A service
 * may hide more than the credential fields the interface names (an access key id, a user name, a client id): such a
 * value is never compared as a value (docs/decisions.md "A value the service hides where govops does not expect it").
 */
export function looksMasked(value: unknown): boolean {
  return typeof value === 'string' && (value === MASK || MASKED_FORM.test(value));
}

/**
 * `key=value` pairs of a connection string or a URL query that name a credential: a name ending in one of the words
 * of a credential (ODBC `PWD=`, `password=`, `token=`, `access_token=`, `private_token=`, `client_secret=`,
 * `api_key=`, `subscription-key=`, `X-Amz-Signature=`, `AccessToken=`), or one of the short names services give one
 * (an Azure SAS `sig=`, an Azure Functions `code=`, `auth=`). The name is one run of `[A-Za-z0-9_.-]` after a
 * separator, read once from each separator: linear in the text.
 */
const CREDENTIAL_PAIR =
  /(?:^|[;&?\s])(?:[A-Za-z0-9_.-]*?(?:pwd|passw(?:or)?d|secret|token|key|signature|credentials?|authorization)|sig|code|auth)\s*=/i;

/** A URL with a password in its userinfo (`https://user:password@host/`), also inside a longer string. */
const URL_PASSWORD = /:\/\/[^/@\s:;]*:[^/@\s;]+@/;

/**
 * Whether a string carries a credential: a `key=value` pair naming one (a connection string with `PWD=`, a URL
 * query with `token=`), or a URL with a password in its userinfo. Exported as it is, it would be committed; shown in a
 * plan or a preview, it would be printed (`plan/diff.ts`).
 */
export function carriesCredential(text: string): boolean {
  return CREDENTIAL_PAIR.test(text) || URL_PASSWORD.test(text);
}

/**
 * Whether a webhook's url carries a credential: as any string does (`carriesCredential`), or with any userinfo at all.
 * A callback has no use for a user name but to authenticate: `https://TOKEN@host/` sends the token as Basic auth. (A
 * user name in a connection string is a name, and stays `carriesCredential`'s.)
 */
export function webhookUrlCarriesCredential(url: string): boolean {
  return carriesCredential(url) || hasUrlUserinfo(url);
}

/** 16 or more letters and digits in a row: a token's run (a word, a number or a UUID's group is not one, see below). */
const TOKEN_RUN = /[A-Za-z0-9]{16,}/g;

/**
 * A run of letters only is a token when its case is drawn at random: at least a third of it upper case, and
 * lower case in it too. A word in camel case (`ProcessIncomingWebhookEvents`) has a capital per word; an acronym
 * then a word (`HTTPNotificationReceiver`) has its capitals together, at the start.
 */
function randomCase(run: string): boolean {
  const upper = run.replace(/[^A-Z]/g, '').length;
  if (upper * 3 < run.length || !/[a-z]/.test(run)) return false;
  return /[a-z][A-Z]{2}|[a-z][A-Z][a-z][A-Z]|[a-z][A-Z][A-Z]?$/.test(run);
}

/**
 * Whether a URL's path holds a token: a run of 16 or more letters and digits with both in it, or of letters in a
 * random mix of cases (a Slack token is 24 letters and digits drawn at random: about one in 70 has no digit). A chat
 * webhook's URL is its own credential, the token in its path (Slack's `/services/T…/B…/<token>`, Discord's
 * `/api/webhooks/<id>/<token>`, Teams' `/IncomingWebhook/<hex>/…`, Mattermost's `/hooks/<id>`): whoever reads it can
 * post. Words, numbers and UUIDs are not such runs.
 */
export function pathCarriesToken(url: string): boolean {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return false;
  }
  for (const run of path.match(TOKEN_RUN) ?? []) if ((/[A-Za-z]/.test(run) && /[0-9]/.test(run)) || randomCase(run)) return true;
  return false;
}

/**
 * A URL as a note may name it: as it is, unless it carries a credential (`webhookUrlCarriesCredential`, or a token in its path:
 * `pathCarriesToken`); then without its userinfo (`***@`), its query (`?…`) and such a path (`/…`), the parts a
 * credential is in. A live webhook's url is someone else's when govops names it (the webhook now at a reused id): its
 * token is not for the plan, the preview or the log.
 */
export function urlWithoutCredential(url: string): string {
  const inPath = pathCarriesToken(url);
  if (!inPath && !webhookUrlCarriesCredential(url)) return url;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.username || u.password ? '***@' : ''}${u.host}${inPath ? '/…' : u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(a url carrying a credential, not shown)';
  }
}

export const SCRIPT_PHASES = ['create', 'initial-create', 'edit', 'delete', 'cleanup', 'post-cleanup'] as const;
export type ScriptPhase = (typeof SCRIPT_PHASES)[number];

/** Script phases that act on an existing integration and so take its id in the path. */
export const SCRIPT_PHASES_WITH_ID: ReadonlySet<ScriptPhase> = new Set(['edit', 'delete']);

/**
 * A host name (optionally after `http(s)://`, before a plain path) that the URL parser returns as it is,
 * lowercased: letters, digits and hyphens in dot-separated labels, no `xn--` label (punycode is checked),
 * the last label not a number (IPv4 forms are rewritten). Anything else goes through the URL parser.
 */
const PLAIN_HOST = /^(?:https?:\/\/)?((?:[a-z0-9-]+\.)*[a-z0-9-]+)(?:\/[a-z0-9._~/-]*)?$/i;
const NUMERIC_LABEL = /(?:^|\.)(?:[0-9]+|0x[0-9a-f]*)$/i;

/** The host of a URL or host name, as the URL parser gives it (lowercased); the value lowercased if it parses as none. */
export function hostOf(value: unknown): string {
  if (typeof value !== 'string') return '';
  const plain = PLAIN_HOST.exec(value);
  if (plain && !NUMERIC_LABEL.test(plain[1]!) && !/(?:^|\.)xn--/i.test(plain[1]!)) return plain[1]!.toLowerCase();
  try {
    return new URL(value.includes('://') ? value : `https://${value}`).hostname.toLowerCase();
  } catch {
    return value.toLowerCase();
  }
}

/**
 * A config field (its last path segment) that says where the service connects, and so where the
 * credentials beside it are sent: a host, a URL, an endpoint, a server address.
 */
export function isDestinationKey(key: string): boolean {
  return /(?:host|url|uri|endpoints?|server|address|domain)$/i.test(key);
}

const URL_PARTS = /^([a-z][a-z0-9+.-]*:\/\/)?([^/?#]*)(.*)$/is;

/**
 * A URL (or a bare host) with its scheme and host lower-cased and the rest as it is: host names compare
 * case-insensitively (RFC 3986 3.2.2), paths and queries do not. Userinfo before `@` keeps its case.
 */
export function urlWithLowerHost(value: string): string {
  const m = URL_PARTS.exec(value);
  if (!m) return value;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const host = at < 0 ? authority.toLowerCase() : `${authority.slice(0, at + 1)}${authority.slice(at + 1).toLowerCase()}`;
  return `${(m[1] ?? '').toLowerCase()}${host}${m[3]!}`;
}

/**
 * A URL as govops compares it: an http(s) URL as the WHATWG URL parser writes it (`new URL(u).href`), which a service
 * storing URLs normalised answers (a Node service keeping `href`, Python's pydantic `HttpUrl`): scheme and host
 * lower-cased, an empty path `/` (`https://h` = `https://h/`, RFC 3986 6.2.3), the scheme's default port dropped
 * (`https://h:443/x` = `https://h/x`), an international host in punycode, dot segments resolved, spaces
 * percent-encoded. Path, query and userinfo keep their case, and a slash after a path (`/in` and `/in/`) stays a
 * difference. Anything else (a bare host, a URL that does not parse): `urlWithLowerHost`.
 */
export function urlAsCompared(value: string): string {
  if (/^https?:\/\//i.test(value)) {
    try {
      return new URL(value).href;
    } catch {
      // not a URL: as urlWithLowerHost writes it
    }
  }
  return urlWithLowerHost(value);
}

/**
 * A webhook's identity as compared in memory: its name and URL (webhooks cannot be edited), the URL compared as
 * `urlAsCompared` says. Never recorded as it is: the state records `keyedWebhookIdentity`.
 */
export function webhookIdentity(name: string, url: string): string {
  return JSON.stringify([name, urlAsCompared(url)]);
}

/** The field of a recorded webhook identity's second member: the keyed fingerprint of its URL. */
const URL_HMAC = 'urlHmac';

/**
 * A webhook's identity as the state records it: its name and, in place of its URL, the HMAC-SHA256 (hex) of the URL
 * (as `urlAsCompared` writes it) under the state's fingerprint key (`key`, hex): `["name",{"urlHmac":"…"}]`. A URL can
 * be a credential (`?access_token=`, a chat webhook's token path) and the state is read by more people than the
 * manifests' repository (a database, a volume, backups; `state show`): it holds no URL (docs/decisions.md).
 */
export function keyedWebhookIdentity(name: string, url: string, key: string): string {
  const mac = createHmac('sha256', Buffer.from(key, 'hex')).update(urlAsCompared(url), 'utf8').digest('hex');
  return JSON.stringify([name, { [URL_HMAC]: mac }]);
}

/**
 * A webhook identity as the state records it now, under the state's key: one written by an older govops
 * (`[name, url]`, the URL in clear, or only lower-cased before `urlAsCompared`) becomes its keyed form, so it still
 * names the same webhook; a keyed one is returned as it is. Anything else is returned as it is.
 */
export function recordedWebhookIdentity(identity: string, key: string): string {
  const parts = webhookIdentityParts(identity);
  if (!parts) return identity;
  return parts.url !== undefined ? keyedWebhookIdentity(parts.name, parts.url, key) : JSON.stringify([parts.name, { [URL_HMAC]: parts.urlHmac }]);
}

/**
 * The name and URL (in a state written by an older govops, or a live identity) or URL fingerprint (as the state
 * records it now) a webhook identity holds; undefined for anything else.
 */
export function webhookIdentityParts(identity: string | undefined): { name: string; url: string; urlHmac?: undefined } | { name: string; url?: undefined; urlHmac: string } | undefined {
  if (identity === undefined || !identity.startsWith('[')) return undefined;
  try {
    const pair: unknown = JSON.parse(identity);
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') return undefined;
    if (typeof pair[1] === 'string') return { name: pair[0], url: pair[1] };
    const mac: unknown = pair[1] !== null && typeof pair[1] === 'object' ? (pair[1] as Record<string, unknown>)[URL_HMAC] : undefined;
    if (typeof mac === 'string') return { name: pair[0], urlHmac: mac };
  } catch {
    // not a pair
  }
  return undefined;
}

/** Statuses in which an integration is still changing (interface 3's observed values besides enabled). */
export const TRANSITIONAL_STATUSES: ReadonlySet<string> = new Set(['creating', 'editing', 'deleting']);
export const ERROR_STATUSES: ReadonlySet<string> = new Set(['createError', 'editError', 'deleteError']);
/**
 * The settled statuses: `enabled` (interface 3: the only settled value it lists; there is no `disabled`) and
 * the error statuses (docs/decisions.md). Polling ends only on one of these (or the integration gone): any
 * other status, documented transitional or unknown (`pending`, `updating`...), keeps it polling until the
 * timeout, whose message names it.
 */
export const SETTLED_STATUSES: ReadonlySet<string> = new Set(['enabled', ...ERROR_STATUSES]);

export function isSettledStatus(status: string): boolean {
  return SETTLED_STATUSES.has(status);
}

/** How a status that ended a wait by the timeout is described: named, and marked when the interface does not list it. */
export function describeUnsettled(status: string): string {
  return TRANSITIONAL_STATUSES.has(status) || status === 'unknown'
    ? `last status: ${status}`
    : `last status: "${status}", which the interface does not list (only enabled, createError, editError and deleteError end a wait)`;
}
export const VALIDATION_TEST_STATUSES = ['passed', 'failed', 'warning', 'skipped'] as const;
export type ValidationTestStatus = (typeof VALIDATION_TEST_STATUSES)[number];
