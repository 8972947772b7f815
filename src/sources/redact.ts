/** Credentials never reach a log line: strip userinfo from URLs (https://user:token@host → https://***@host). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@\s]+)@/i, '$1***@');
}

/** A free text (git error messages quote the remote): the one redactor (URL userinfo and every secret value). */
export { redactText } from '../util/redact.js';
