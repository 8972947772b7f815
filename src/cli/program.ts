/**
 * The govops command tree: global options and every command's declaration (commander only, no action
 * module). main.ts parses process.argv with it (or with the root and the one command named first: see
 * main.ts); `govops healthcheck` parses a running daemon's argv with it.
 */
import type { Command } from 'commander';
import { COMMANDS } from './commands/index.js';
import { rootProgram } from './root.js';

/** The whole tree: the root and every command, in the order `govops --help` lists them. */
export function buildProgram(): Command {
  const program = rootProgram();
  for (const register of COMMANDS) register(program);
  return program;
}
