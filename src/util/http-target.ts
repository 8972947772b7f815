/**
 * The path of an HTTP request target, or undefined when the target is malformed (answered 400, never
 * 500): it must be origin-form (`/path?query`) and resolve as a URL the way a client would resolve it
 * (`//[` does not: an authority with a broken IPv6 literal).
 */
export function requestPath(target: string | undefined): string | undefined {
  if (target === undefined || target === '') return '/';
  if (!target.startsWith('/')) return undefined;
  try {
    new URL(target, 'http://localhost'); // rejects `//[`, `//a b` and other broken authorities
    return new URL(`http://localhost${target}`).pathname;
  } catch {
    return undefined;
  }
}
