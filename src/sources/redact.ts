import { dropUrlUserinfo } from '../util/url-userinfo.js';

/**
 * Credentials never reach a log line: strip userinfo from URLs (https://user:token@host → https://***@host). All of
 * it, up to the last `@` before the path: a password holding an unencoded `@` (`https://user:p@ss@host/repo`) is cut
 * there by the URL parser, so the part after its first `@` is still the password.
 */
export function redactUrl(url: string): string {
  const out = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/\s]*@/i, '$1***@');
  // a password holding an unencoded `/` (`https://user:pa/ss@host/repo`): no parser reads it so, git prints it as it is
  return out === url ? dropUrlUserinfo(url) : out;
}

/** A free text (git error messages quote the remote): the one redactor (URL userinfo and every secret value). */
export { redactText } from '../util/redact.js';
