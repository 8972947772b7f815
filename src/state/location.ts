/**
 * Where the govops state lives: a file path (the default backend) or a PostgreSQL URL
 * (`postgres://` / `postgresql://`). A URL's fragment (`#name`) is the state key, which separates
 * several govops deployments sharing one database (`--state-key` / GOVOPS_STATE_KEY put it there).
 * The URL's password is registered with the redactor as soon as the location is read: it never
 * reaches an output, whatever message carries the URL.
 */
import { UserError } from '../errors.js';
import { registerSecrets } from '../util/redact.js';
import { DEFAULT_STATE_KEY } from './types.js';

export interface PgLocation {
  /** The URL given to the driver (no fragment). */
  connectionString: string;
  /** The state key (name) of this deployment's state in the database. */
  key: string;
  /** host:port/database, for messages (no user, no password). */
  display: string;
}

export function isPgLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * A state location written as a URL (`scheme://...`) that is not PostgreSQL's is refused: read as a file path, a
 * typo (`postgress://`, `postgre://`) or another store (`s3://`) would make govops keep its state in a local file named
 * after the URL (password included), which a CI job throws away. `from` names where the value came from.
 */
export function checkStateLocation(location: string, from: string): void {
  if (isPgLocation(location) || !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(location)) return;
  const scheme = location.slice(0, location.indexOf(':'));
  throw new UserError(
    `${from} is a URL with the scheme ${scheme}://: the state is a file path or a postgres:// (postgresql://) URL`,
    'write a postgres:// URL (user, password, host, port, database), or give a file path',
  );
}

/** Query parameters of a PostgreSQL URL that carry a secret (pg-connection-string reads them). */
const PASSWORD_PARAMS = ['password', 'sslpassword'];

/**
 * A percent-decoded URL part, or the part as written when it is no valid escape (a password with a `%`, which the driver
 * takes as it is): decodeURIComponent's URIError was an internal error, thrown before the password was registered.
 */
function decodeOrAsIs(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

/** Parse a PostgreSQL state location; throws a UserError for a malformed URL or key. */
export function parsePgLocation(location: string): PgLocation {
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    throw new UserError('the PostgreSQL state URL is not a valid URL', 'write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE (GOVOPS_STATE_URL)');
  }
  // The driver (like libpq) also takes the password from the `password` parameter, and a client key's from
  // `sslpassword`: registered as well, or a URL written that way was printed with its password.
  if (url.password) registerSecrets(url.password, decodeOrAsIs(url.password));
  for (const p of PASSWORD_PARAMS) registerSecrets(...url.searchParams.getAll(p));
  const key = url.hash ? decodeOrAsIs(url.hash.slice(1)) : DEFAULT_STATE_KEY;
  if (!KEY_PATTERN.test(key)) {
    throw new UserError(`the state key ${JSON.stringify(key)} is not valid`, 'use letters, digits and . _ : / - (at most 128 characters), starting with a letter or digit');
  }
  url.hash = '';
  const db = url.pathname.replace(/^\//, '') || '(default database)';
  return { connectionString: url.toString(), key, display: `postgres ${url.hostname}${url.port ? `:${url.port}` : ''}/${db} key ${key}` };
}

/** The location with `key` as its state key (a file path is returned as it is: keys are for databases). */
export function withStateKey(location: string, key: string | undefined): string {
  if (!key || !isPgLocation(location)) return location;
  const url = new URL(location);
  url.hash = encodeURIComponent(key);
  return url.toString();
}

/** How a state location is named in messages: a file path as it is, a URL without credentials. */
export function describeStateLocation(location: string): string {
  return isPgLocation(location) ? parsePgLocation(location).display : location;
}
