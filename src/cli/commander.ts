/**
 * commander, required through its CommonJS entry (`index.js`, the package's own `require` export) instead of
 * imported through `esm.mjs`: that wrapper makes Node load the CommonJS module through the ESM loader and scan
 * its source for exports: 2-3 ms of CPU in every govops process (`--help` 82-83 → 79-80 ms against 55-56 for
 * `node -e 0`; docs/decisions.md). The same classes; types still come from the package.
 */
import { createRequire } from 'node:module';
import type * as Commander from 'commander';

const commander = createRequire(import.meta.url)('commander') as typeof Commander;

export const { Command, Option, Help, InvalidArgumentError } = commander;
export type Command = Commander.Command;
export type Option = Commander.Option;
export type Help = Commander.Help;
export type InvalidArgumentError = Commander.InvalidArgumentError;
