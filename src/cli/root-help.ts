/**
 * `govops --help` alone (or `--version`): the root with each command's summary (commands/summaries.ts) instead of
 * its declaration, so the root's help loads none of the 14 declaration modules and their helpers (issue #26).
 * The help text is the whole tree's (test/cli/program.test.ts compares them at several widths). The `govops`
 * command (bin.ts) has this module and what it imports built into its own file, so these two answers start no
 * ES module at all.
 */
import { Help, type Command } from './commander.js';
import { COMMAND_SUMMARIES, type CommandSummary } from './commands/summaries.js';
import { rootCommand } from './root-command.js';

const SUMMARIES: Readonly<Record<string, CommandSummary>> = COMMAND_SUMMARIES;

/** `govops --help`, `-h`, `--version` or `-V`, and nothing else: what the root alone answers. */
export const asksRootOnly = (args: readonly string[]): boolean =>
  args.length === 1 && (args[0] === '--help' || args[0] === '-h' || args[0] === '--version' || args[0] === '-V');

/** The root and one entry per command (name, term and description only: no options, no action). */
export function rootHelpProgram(): Command {
  const root = rootCommand(); // (the hooks are the actions': no action runs here)
  for (const [name, summary] of Object.entries(SUMMARIES)) root.command(name).description(summary.description);
  return root.configureHelp({
    subcommandTerm(this: Help, cmd: Command): string {
      return Object.hasOwn(SUMMARIES, cmd.name()) ? SUMMARIES[cmd.name()]!.term : Help.prototype.subcommandTerm.call(this, cmd);
    },
  });
}
