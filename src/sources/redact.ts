/** Credentials never reach a log line: strip userinfo from URLs (https://user:token@host → https://***@host). */

export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@\s]+)@/i, '$1***@');
}

/** Redact every URL with userinfo inside a free text (git error messages quote the remote). */
export function redactText(text: string, secrets: ReadonlyArray<string | undefined> = []): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)([^/@\s]+)@/gi, '$1***@');
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('***');
  return out;
}
