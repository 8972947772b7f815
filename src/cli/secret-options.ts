/**
 * The secret-scope flags of every command that reads manifests (validate, plan, apply, preview,
 * scripts, run, state adopt, acknowledge, webhooks list): `--secrets-dir` / GOVOPS_SECRETS_DIR and `--secret-env-prefix` /
 * GOVOPS_SECRET_ENV_PREFIX. Light on purpose (commander only): resolution is in secret-scope.ts.
 */
import type { Command } from 'commander';

export interface SecretFlags {
  secretsDir?: string;
  secretEnvPrefix?: string;
}

export function addSecretOptions<C extends Command>(cmd: C): C {
  cmd
    .option('--secrets-dir <dir>', 'the only folder fromFile references are read from, by relative path (env GOVOPS_SECRETS_DIR; default: the folder of the manifests)')
    .option('--secret-env-prefix <prefix>', 'fromEnv references may read only variables starting with this (env GOVOPS_SECRET_ENV_PREFIX; default GOVOPS_SECRET_)');
  return cmd;
}
