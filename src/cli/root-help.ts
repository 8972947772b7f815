/**
 * `govops --help` alone: the root with each command's summary (commands/summaries.ts) instead of its
 * declaration, so the root's help loads none of the 14 declaration modules and their helpers (issue #26).
 * The help text is the whole tree's (test/cli/program.test.ts compares them at several widths).
 */
import { Help, type Command } from './commander.js';
import { COMMAND_SUMMARIES, type CommandSummary } from './commands/summaries.js';
import { rootCommand } from './root-command.js';

const SUMMARIES: Readonly<Record<string, CommandSummary>> = COMMAND_SUMMARIES;

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
