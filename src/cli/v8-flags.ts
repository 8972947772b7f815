/**
 * The V8 flags every govops command sets as it starts (bin.ts), before the command line's code is compiled.
 *
 * `--liftoff-only`: undici parses HTTP with llhttp compiled to WebAssembly. V8 compiles that module with its baseline
 * compiler (Liftoff) at the first request, and then optimises llhttp's parser, one large function, on a background
 * thread: ~150 ms of CPU on the machines we measure on, and a process cannot exit before a background compile ends.
 * So the last ~150 ms of every short command that talked to the service was spent waiting for code it would never run.
 * The baseline code parses the service's answers at least as fast as the optimised code plus its compile
 * (docs/decisions.md "A command's V8 flags"); no other WebAssembly runs in a command.
 *
 * The flags are part of what V8 checks before it accepts compiled code:
 * - the build records the command's code under the same flags (scripts/code-cache-record.mjs sets them first), and
 *   the record's index names them;
 * - Node compiles its own modules from code built into its binary under the default flags: one first loaded after
 *   the change is compiled from its source, about twice the CPU (http2 and assert ~25 → ~60 ms). So the Node modules
 *   the command will load anyway are loaded before the change.
 */
import { createRequire } from 'node:module';

export const COMMAND_V8_FLAGS = '--liftoff-only';

/** Node's modules every command loads: the record's checks (sha1, vm.Script), files. */
const LOADED_BY_EVERY_COMMAND = ['node:crypto', 'node:vm', 'node:fs/promises'];
/** ...by a command that reads the state (its lock). */
const LOADED_WITH_STATE = ['node:os', 'node:timers/promises'];
/** ...and by one that sends requests: what undici requires as it loads. */
const LOADED_WHEN_SENDING = ['node:tls', 'node:http2', 'node:assert'];

/** The commands that read the state, and those that send requests (to the service, GitHub or GitLab), in their common use. */
const STATE_COMMANDS: ReadonlySet<string> = new Set(['plan', 'apply', 'export', 'webhooks', 'preview', 'run', 'scripts', 'state']);
const SENDING_COMMANDS: ReadonlySet<string> = new Set(['plan', 'apply', 'export', 'webhooks', 'preview', 'comment', 'run', 'scripts']);

/**
 * Set COMMAND_V8_FLAGS for this process, once the Node modules `command` (the first argument) will load are loaded.
 * A command missing from the lists (or `state adopt`, which sends where other `state` commands do not) only loads
 * some of Node's modules more slowly; nothing else depends on them.
 */
export function setCommandV8Flags(command: string | undefined): void {
  const require = createRequire(import.meta.url);
  const ids = [...LOADED_BY_EVERY_COMMAND];
  if (command !== undefined && STATE_COMMANDS.has(command)) ids.push(...LOADED_WITH_STATE);
  if (command !== undefined && SENDING_COMMANDS.has(command)) ids.push(...LOADED_WHEN_SENDING);
  for (const id of ids) require(id);
  (require('node:v8') as typeof import('node:v8')).setFlagsFromString(COMMAND_V8_FLAGS);
}
