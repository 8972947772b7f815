/**
 * `govops scripts NAME --phase PHASE [PATH...]`: the manual flow (autoBootstrap false). Fetch the
 * script the service generates for integration NAME and write it to a file or stdout.
 * govops never runs scripts. On stderr it prints the `govops/manual-step` acknowledgment to add to the
 * manifest once the script ran (`--ack` prints only that, offline). This file only declares the command; the work is in scripts-action.ts,
 * loaded when it runs.
 */
import { Option, type Command } from '../commander.js';
import { SCRIPT_PHASES, type ScriptPhase } from '../../service/kinds.js';
import { stateOption } from '../state-option.js';
import { addConnectionOptions, type ConnectionFlags } from '../connection-options.js';
import { addSecretOptions, type SecretFlags } from '../secret-options.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface ScriptsFlags extends ConnectionFlags, SecretFlags {
  phase: ScriptPhase;
  state: string;
  out?: string;
  ack?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('scripts')
    .description(COMMAND_SUMMARIES.scripts.description)
    .argument('<name>', 'metadata.name of the Integration manifest')
    .argument('[paths...]', 'manifest files or folders, or - for a YAML stream on standard input', ['.'])
    .addOption(new Option('--phase <phase>', 'which script').choices([...SCRIPT_PHASES]).makeOptionMandatory())
    .addOption(stateOption('govops state file (to find the live id for edit/delete)'))
    .option('--out <file>', 'write the script to this file instead of stdout')
    .option('--ack', 'print only the govops/manual-step acknowledgment to add to the manifest once the script ran (offline: no service call, no secrets)');
  addSecretOptions(cmd);
  addConnectionOptions(cmd).action(async (name: string, paths: string[], opts: ScriptsFlags, command: Command) => {
    const { scriptsAction } = await import('./scripts-action.js');
    await scriptsAction(name, paths, opts, command);
  });
}
