/**
 * The root command of the govops tree: global options and the hooks, no subcommand (program.ts adds every
 * command; main.ts may add only the one it runs). Its options are root-command.ts's.
 */
import type { Command } from './commander.js';
import { rootCommand } from './root-command.js';
import { resolveStateFlags } from './state-option.js';
import { resolveSwitchesFromEnv } from './boolean-env.js';
import { checkOutputFormat } from './output-formats.js';
import { registerOperatorToken } from './operator-token.js';

/** The root command: global options and hooks, no subcommand. */
export function rootProgram(): Command {
  return (
    rootCommand()
      .hook('preAction', (_root, action) => {
        checkOutputFormat(action);
        resolveSwitchesFromEnv(action);
        resolveStateFlags(action);
        registerOperatorToken(action);
      })
      // after a usage error (a misspelled flag...), commander's did-you-mean and this line, not the whole help
      .showHelpAfterError("(add --help for the command's options)")
  );
}
