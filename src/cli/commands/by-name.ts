/**
 * Each command's declaration module by the command's name, loaded on demand: `govops <command> ...` (the
 * command named first) builds the root and that one command only, not the 14 declarations and their helpers
 * (issue #26). Same names as COMMANDS registers (test/cli/program.test.ts checks both, and that each
 * command's help and options are the same either way).
 */
import type { Command } from 'commander';

type Register = (program: Command) => void;

export const COMMAND_LOADERS: Readonly<Record<string, () => Promise<Register>>> = {
  validate: async () => (await import('./validate.js')).register,
  plan: async () => (await import('./plan.js')).register,
  preview: async () => (await import('./preview.js')).register,
  comment: async () => (await import('./comment.js')).register,
  apply: async () => (await import('./apply.js')).register,
  state: async () => (await import('./state.js')).register,
  export: async () => (await import('./export.js')).register,
  run: async () => (await import('./run.js')).register,
  healthcheck: async () => (await import('./healthcheck.js')).register,
  scripts: async () => (await import('./scripts.js')).register,
  acknowledge: async () => (await import('./acknowledge.js')).register,
  webhooks: async () => (await import('./webhooks.js')).register,
  sandbox: async () => (await import('./sandbox.js')).register,
  schema: async () => (await import('./schema.js')).register,
};

/** The loader of the command `name` names, if it is one (own keys only: `toString` is no command). */
export function commandLoader(name: string | undefined): (() => Promise<Register>) | undefined {
  return name !== undefined && Object.hasOwn(COMMAND_LOADERS, name) ? COMMAND_LOADERS[name] : undefined;
}
