/** Sandbox callers: tokens from options, a tokens file, fixed dev tokens, or generated ones (interface part 5). */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AuthScheme, Caller, Role } from './http.js';
import { HttpError } from './http.js';

/** Fixed tokens accepted with `--dev` (and by `npm start`). For local use only. */
export const DEV_ADMIN_TOKEN = 'govops-dev-admin-token';
export const DEV_USER_TOKEN = 'govops-dev-user-token';

export interface TokenEntry {
  token: string;
  role: Role;
  userId: number;
  name: string;
}

export interface TokenOptions {
  adminToken?: string;
  userToken?: string;
  tokensFile?: string;
  dev?: boolean;
}

/** Where a token came from: an option (`--admin-token`), the tokens file, the fixed dev tokens, or generated here. */
export type TokenOrigin = 'given' | 'file' | 'dev' | 'generated';

export interface TokenSet {
  adminToken: string;
  userToken: string;
  /** Which tokens were generated here (and so must be printed for the user to know them). */
  generated: boolean;
  /** Where each token came from (the banner prints those the user did not configure). */
  origins: { admin: TokenOrigin; user: TokenOrigin };
  callers: Map<string, Caller>;
}

function parseRole(value: unknown): Role {
  if (value === 'admin' || value === 'APPLICATION_ADMIN') return 'admin';
  if (value === 'user' || value === undefined) return 'user';
  throw new Error(`unknown role ${JSON.stringify(value)} (use "admin" or "user")`);
}

export function readTokensFile(file: string): TokenEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read tokens file ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (!Array.isArray(data)) throw new Error(`tokens file ${file}: expected a JSON array of {token, role, userId, name}`);
  return data.map((raw, i) => {
    const e = raw as Record<string, unknown>;
    if (typeof e?.token !== 'string' || e.token === '') throw new Error(`tokens file ${file}: entry ${i} has no token`);
    return {
      token: e.token,
      role: parseRole(e.role),
      userId: typeof e.userId === 'number' ? e.userId : 100 + i,
      name: typeof e.name === 'string' ? e.name : `user${i}`,
    };
  });
}

function generate(): string {
  return randomBytes(24).toString('base64url');
}

export function buildTokens(options: TokenOptions): TokenSet {
  const entries: TokenEntry[] = options.tokensFile ? readTokensFile(options.tokensFile) : [];
  const origins: { admin: TokenOrigin; user: TokenOrigin } = { admin: 'given', user: 'given' };
  const pick = (given: string | undefined, dev: string, role: Role): string => {
    if (given) return given;
    const fromFile = entries.find((e) => e.role === role);
    origins[role] = fromFile ? 'file' : options.dev ? 'dev' : 'generated';
    if (fromFile) return fromFile.token;
    return options.dev ? dev : generate();
  };
  const adminToken = pick(options.adminToken, DEV_ADMIN_TOKEN, 'admin');
  const userToken = pick(options.userToken, DEV_USER_TOKEN, 'user');
  const generated = origins.admin === 'generated' || origins.user === 'generated';
  const callers = new Map<string, Caller>();
  for (const e of entries) callers.set(e.token, { token: e.token, role: e.role, userId: e.userId, userName: e.name });
  if (!callers.has(adminToken)) callers.set(adminToken, { token: adminToken, role: 'admin', userId: 1, userName: 'admin' });
  if (!callers.has(userToken)) callers.set(userToken, { token: userToken, role: 'user', userId: 2, userName: 'user' });
  return { adminToken, userToken, generated, origins, callers };
}

/**
 * Authenticate a request for a route's scheme: integration endpoints read the raw Authorization value
 * and need an administrator; webhook endpoints need `Bearer <token>`. Throws 401/403 HttpErrors.
 */
export function authenticate(
  scheme: AuthScheme,
  header: string | string[] | undefined,
  callers: ReadonlyMap<string, Caller>,
): Caller | undefined {
  if (scheme === 'none') return undefined;
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === '') throw new HttpError(401, 'Missing Authorization header');
  let token = value;
  if (scheme === 'webhook') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(value);
    if (!m) throw new HttpError(401, 'Webhook requests must carry "Authorization: Bearer <token>"');
    token = m[1]!;
  }
  const caller = callers.get(token);
  if (!caller) throw new HttpError(401, 'Invalid or unknown token');
  if (scheme === 'integration' && caller.role !== 'admin') {
    throw new HttpError(403, 'Managing integrations requires the APPLICATION_ADMIN permission');
  }
  return caller;
}
