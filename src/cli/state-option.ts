/**
 * `--state PATH|URL` / GOVOPS_STATE, the same for every command that reads or writes the govops state:
 * a file path (the default backend) or a PostgreSQL URL (`postgres://` or `postgresql://`). GOVOPS_STATE_URL
 * holds a whole URL so it need not appear on a command line; `--state-key` / GOVOPS_STATE_KEY names this
 * deployment's state in a database shared by several (default `default`).
 */
import { Option, type Command } from './commander.js';
import { DEFAULT_STATE_PATH } from '../state/types.js';
import { checkStateLocation, describeStateLocation, isPgLocation, parsePgLocation, withStateKey } from '../state/location.js';
import { UserError } from '../errors.js';

export function stateOption(purpose = 'govops state: a file path, or a postgres:// URL (env GOVOPS_STATE_URL)'): Option {
  return new Option('--state <path|url>', purpose).env('GOVOPS_STATE').default(DEFAULT_STATE_PATH);
}

/**
 * Before a command runs: GOVOPS_STATE_URL stands for `--state` when neither the flag nor GOVOPS_STATE gave one,
 * and the state key is put in a PostgreSQL location (its fragment), so every caller passes one string.
 */
export function resolveStateFlags(action: Command, env: NodeJS.ProcessEnv = process.env): void {
  if (!action.options.some((o) => o.attributeName() === 'state')) return;
  let state = action.getOptionValue('state') as string | undefined;
  let source = action.getOptionValueSource('state');
  if (state === undefined) return; // export's --state, not given
  // An empty GOVOPS_STATE (a CI variable templated from an unset one) is as if unset, as for the other variables;
  // taken as a path, `''` read no state (a plan of creates) and failed only when writing.
  if (source === 'env' && state.trim() === '') [state, source] = [DEFAULT_STATE_PATH, 'default'];
  if (state.trim() === '') throw new UserError('--state is empty', 'give a state file path or a postgres:// URL, or leave the flag out for .govops/state.json');
  const fromUrlEnv = source === 'default' && Boolean(env.GOVOPS_STATE_URL);
  if (fromUrlEnv) state = env.GOVOPS_STATE_URL as string;
  if (fromUrlEnv && !isPgLocation(state)) {
    throw new UserError('GOVOPS_STATE_URL is not a postgres:// (postgresql://) URL', 'it holds a whole PostgreSQL URL; a state file is given with --state or GOVOPS_STATE');
  }
  checkStateLocation(state, source === 'env' ? 'GOVOPS_STATE' : '--state');
  if (isPgLocation(state)) {
    state = withStateKey(state, stateKeyFor(action, state, source === 'cli'));
    parsePgLocation(state); // registers the password with the redactor; a malformed URL or key fails here
  }
  action.setOptionValueWithSource('state', state, source === 'default' && state !== DEFAULT_STATE_PATH ? 'env' : source);
}

/**
 * The state key to put in a PostgreSQL location, or undefined to keep the URL's own (`#key`, else `default`). The key
 * written on the command line wins over one from the environment: a `#key` in `--state` over GOVOPS_STATE_KEY (a CI job
 * sets it for all its commands; replacing the written key, `state forget` edited another deployment's state), and
 * `--state-key` over the `#key` of GOVOPS_STATE_URL. Two different keys on the command line are refused; from the
 * environment both, GOVOPS_STATE_KEY wins, as before.
 */
function stateKeyFor(action: Command, location: string, locationOnCommandLine: boolean): string | undefined {
  const key = (action.optsWithGlobals() as { stateKey?: string }).stateKey;
  let fragment: string;
  try {
    fragment = new URL(location).hash.slice(1);
  } catch {
    return key; // not a URL: parsePgLocation says so
  }
  if (key === undefined || fragment === '') return key;
  let written = fragment;
  try {
    written = decodeURIComponent(fragment);
  } catch {
    // a `%` that is no escape: the key as written
  }
  if (written === key) return key;
  const keyOnCommandLine = action.getOptionValueSourceWithGlobals('stateKey') === 'cli';
  if (locationOnCommandLine && keyOnCommandLine) {
    throw new UserError(
      `--state names the state key ${written} (#${written}) and --state-key ${key}: which state is meant?`,
      `give one: --state-key ${key}, or the URL's #${written} (${describeStateLocation(location)})`,
    );
  }
  return locationOnCommandLine ? undefined : key;
}
