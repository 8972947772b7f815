/**
 * `govops state migrate --to TARGET`: copy the whole state (resources with their intents, fingerprint key,
 * learned timings) from --state to another backend, file -> PostgreSQL or back. Both states are locked for
 * the copy; a target that already holds a state is refused without --force; the copy is read back and
 * compared (counts and every entry) before the command reports success.
 */
import type { Command } from 'commander';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ErrorCode, UserError } from '../../errors.js';
import { acquireStateLock, withStateLock } from '../../state/lock.js';
import { checkStateLocation, describeStateLocation, isPgLocation, parsePgLocation, withStateKey } from '../../state/location.js';
import { pgStateFor } from '../../state/pg/backend.js';
import { loadState, saveState, serializeState } from '../../state/store.js';
import type { GovopsState } from '../../state/types.js';
import { contextFrom, EXIT } from '../context.js';
import type { MigrateFlags } from './state.js';

const LOCK_WAIT_MS = 10_000;

function targetOf(flags: MigrateFlags, stateKey: string | undefined): string {
  checkStateLocation(flags.to, '--to');
  if (!isPgLocation(flags.to)) {
    // A folder was taken for a state that exists ("already holds a state"), and with --force failed on a bare EISDIR.
    if (statSync(flags.to, { throwIfNoEntry: false })?.isDirectory()) {
      throw new UserError(`--to ${flags.to} is a folder: the target is the state file itself`, `e.g. --to ${join(flags.to, 'state.json')}`);
    }
    return flags.to;
  }
  const written = parsePgLocation(flags.to).key; // the password goes to the redactor first; a malformed URL fails here
  if (flags.toKey !== undefined && new URL(flags.to).hash && written !== flags.toKey) {
    // the --to-key replaced the key written in --to without a word
    throw new UserError(`--to names the state key ${written} (#${written}) and --to-key ${flags.toKey}: which state is meant?`, `give one: --to-key ${flags.toKey}, or the URL's #${written}`);
  }
  const explicit = flags.toKey ?? (new URL(flags.to).hash ? undefined : stateKey);
  const to = withStateKey(flags.to, explicit);
  parsePgLocation(to); // the password goes to the redactor
  return to;
}

/** A state as plain data, resources in a stable order (a database may keep an entry's keys in another order). */
const canonical = (state: GovopsState): unknown => JSON.parse(serializeState(state));

/** The file a path names, however spelled (`./`, `..`, absolute, a symbolic link); a file not yet made by its folder. */
function fileIdentity(location: string): string {
  const abs = resolve(location);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return join(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  }
}

/** Both locations name one state: copying it onto itself would wait for its own lock, then fail. */
function sameState(from: string, to: string): boolean {
  if (isPgLocation(from) !== isPgLocation(to)) return false;
  if (isPgLocation(from)) return describeStateLocation(from) === describeStateLocation(to);
  return fileIdentity(from) === fileIdentity(to);
}

async function holdsState(location: string): Promise<boolean> {
  return isPgLocation(location) ? pgStateFor(location).exists() : existsSync(location);
}

export async function migrateAction(flags: MigrateFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const from = flags.state;
  const to = targetOf(flags, (command.optsWithGlobals() as { stateKey?: string }).stateKey);
  const src = describeStateLocation(from);
  const dst = describeStateLocation(to);
  const same = (): UserError => new UserError(`--to names the same state as --state (${src})`, 'give another file or state key');
  if (sameState(from, to)) throw same();
  const fromLock = await acquireStateLock(from, { waitMs: LOCK_WAIT_MS });
  let copied: GovopsState;
  try {
    // The same database spelt another way (`localhost` for `127.0.0.1`, a DNS name for its address): its key's lock is
    // the one just taken. Without this check the copy waited 10 s for its own lock, then said another process held it.
    if (isPgLocation(from) && isPgLocation(to) && (await pgStateFor(to).lockToken()) === fromLock.info.token) throw same();
    copied = await withStateLock(
      to,
      async () => {
        if (!(await holdsState(from))) throw new UserError(`there is no state at ${src} to copy`, 'check --state (and --state-key)');
        if ((await holdsState(to)) && !flags.force) {
          throw new UserError(`the target ${dst} already holds a state; nothing was copied`, 'add --force to replace it (what it records is lost)', { code: ErrorCode.userError });
        }
        const state = await loadState(from);
        await saveState(to, state);
        const back = await loadState(to);
        if (back.resources.length !== state.resources.length || !isDeepStrictEqual(canonical(back), canonical(state))) {
          throw new UserError(
            `the copy at ${dst} does not match ${src} (${back.resources.length} of ${state.resources.length} resources read back)`,
            'run the migration again; the source is unchanged',
            { code: ErrorCode.io },
          );
        }
        return state;
      },
      { waitMs: LOCK_WAIT_MS },
    );
  } finally {
    await fromLock.release();
  }
  const pending = copied.resources.filter((r) => r.pending).length;
  const summary = { from: src, to: dst, resources: copied.resources.length, pendingIntents: pending, transitions: Object.keys(copied.transitions ?? {}).length, verified: true };
  if (ctx.options.output === 'json') ctx.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else {
    ctx.stdout.write(
      `Copied the state from ${src} to ${dst}: ${summary.resources} resources (${pending} pending intents), ${summary.transitions} learned timings; read back and verified.\n` +
        `Point govops at the new state (--state / GOVOPS_STATE_URL); the old one is left as it was.\n`,
    );
  }
  process.exitCode = EXIT.ok;
}
