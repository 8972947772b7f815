/** govops' version (package.json) and the User-Agent it sends: `govops/<version>`, with ` (<identity>)` for a daemon replica. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const GOVOPS_VERSION = (JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { version: string }).version;

/** The identity is shown as printable ASCII (anything else `_`): a header holding a control or non-Latin-1 character is refused, every request with it. */
export function userAgent(identity?: string): string {
  return `govops/${GOVOPS_VERSION}${identity ? ` (${identity.replace(/[^\x20-\x7e]|[()]/gu, '_')})` : ''}`;
}
