/**
 * `govops acknowledge --phase PHASE [PATH...] [--only NAME]...`: once the platform scripts of manual-flow
 * integrations (autoBootstrap false) ran, write their `govops/manual-step` acknowledgments into the manifests
 * (all of them, or those named), keeping comments and layout. Offline: no service call, no secret resolved.
 * The work is in acknowledge-action.ts, loaded when it runs.
 */
import { Option, type Command } from '../commander.js';
import { SCRIPT_PHASES, type ScriptPhase } from '../../service/kinds.js';
import { addSecretOptions, type SecretFlags } from '../secret-options.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface AcknowledgeFlags extends SecretFlags {
  phase: ScriptPhase;
  only?: string[];
  dryRun?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('acknowledge')
    .description(COMMAND_SUMMARIES.acknowledge.description)
    .argument('[paths...]', 'manifest files or folders', ['.'])
    .addOption(new Option('--phase <phase>', 'the phase whose scripts ran').choices([...SCRIPT_PHASES]).makeOptionMandatory())
    .option('--only <name>', 'only this Integration (repeatable; default: every manual-flow integration with a script for the phase)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--dry-run', 'print what would be written, change no file');
  addSecretOptions(cmd).action(async (paths: string[], opts: AcknowledgeFlags, command: Command) => {
    const { acknowledgeAction } = await import('./acknowledge-action.js');
    await acknowledgeAction(paths, opts, command);
  });
}
