/**
 * The V8 flags every govops command sets as it starts (bin.ts), before the command line's code is compiled.
 *
 * `--liftoff-only`: undici parses HTTP with llhttp compiled to WebAssembly. V8 compiles that module with its baseline
 * compiler (Liftoff) at the first request, and then optimises llhttp's parser, one large function, on a background
 * thread: ~150 ms of CPU on the machines we measure on, and a process cannot exit before a background compile ends.
 * So the last ~150 ms of every short command that talked to the service was spent waiting for code it would never run.
 * The baseline code parses the service's answers at least as fast as the optimised code plus its compile
 * (bench/RESULTS.md, twenty-fifth pass); no other WebAssembly runs in a command.
 *
 * The flags are part of what V8 checks before it accepts compiled code: the build records the command's code under
 * the same flags (scripts/code-cache-record.mjs sets them first), and the record's index names them
 * (docs/decisions.md "A command's V8 flags").
 */
import { createRequire } from 'node:module';

export const COMMAND_V8_FLAGS = '--liftoff-only';

/** Set COMMAND_V8_FLAGS for this process (node:v8 is required here, not imported: `govops --help` never loads it). */
export function setCommandV8Flags(): void {
  (createRequire(import.meta.url)('node:v8') as typeof import('node:v8')).setFlagsFromString(COMMAND_V8_FLAGS);
}
