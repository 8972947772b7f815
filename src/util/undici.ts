/**
 * undici's Pool, Agent and request API, required from their own modules rather than undici's index, which also
 * loads fetch, WebSocket, EventSource, the cache, mocks and the rest: ~25 instead of ~80 ms of CPU in every process
 * that talks HTTP, and ~10 MB less resident in the daemon (issue #26; docs/decisions.md). They are the very
 * classes and function `import { Pool, Agent, request } from 'undici'` rests on: test/api/transport-modules.test.ts
 * fails if an undici upgrade moves them. Each is required on first use: a command that never sends a request
 * (`state list`, `state rm`) loads neither undici nor Node's http2 and tls, which undici requires as it loads.
 */
import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, Dispatcher, Pool as UndiciPool } from 'undici';

const requireUndici = createRequire(import.meta.url);

/** undici's Pool class (`import { Pool } from 'undici'`). */
export const undiciPool = (): typeof UndiciPool => requireUndici('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
/** undici's Agent class. */
export const undiciAgent = (): typeof UndiciAgent => requireUndici('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
/** undici's request API, called on a dispatcher (`undiciRequest().call(pool, options)`), as `pool.request` is. */
export const undiciRequest = (): ((this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>) =>
  requireUndici('undici/lib/api/api-request.js') as (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;

let agent: UndiciAgent | undefined;

/**
 * One request to a full URL through a shared keep-alive Agent: what undici's top-level `request(url, options)`
 * does with its default global dispatcher (origin and path from the URL; GET, or PUT with a body, unless given).
 */
export function requestUrl(url: string, options: Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & { method?: Dispatcher.HttpMethod }): Promise<Dispatcher.ResponseData> {
  const u = new URL(url);
  agent ??= new (undiciAgent())();
  return undiciRequest().call(agent, {
    ...options,
    origin: u.origin,
    path: u.search ? `${u.pathname}${u.search}` : u.pathname,
    method: options.method ?? (options.body ? 'PUT' : 'GET'),
  });
}
