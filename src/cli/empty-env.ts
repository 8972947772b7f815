/**
 * An option's variable set to an empty (or blank) value, as a CI file templated from an unset variable writes it,
 * is as if unset: the option keeps its default. commander takes any set variable as the value, so
 * `GOVOPS_MANUAL_STEPS=` was a usage error, `GOVOPS_PATH=` a folder named '' and `GOVOPS_LISTEN=` an address that
 * did not parse, while GOVOPS_STATE, GOVOPS_LOG_LEVEL, the secret scope's and the switches' variables already read
 * an empty value so. The command line still wins: an empty `--flag ''` is the command's to judge.
 */

/**
 * The variables of options that take a value (`new Option(...).env(NAME)`; the switches' are boolean-env.ts's). A
 * test checks the list against every option of the command tree.
 */
export const VALUE_OPTION_VARIABLES = [
  'GOVOPS_BRANCH',
  'GOVOPS_DIR',
  'GOVOPS_IDENTITY',
  'GOVOPS_LISTEN',
  'GOVOPS_MANUAL_STEPS',
  'GOVOPS_PATH',
  'GOVOPS_RENDER',
  'GOVOPS_REPO',
  'GOVOPS_SECRETS_DIR',
  'GOVOPS_SECRET_ENV_PREFIX',
  'GOVOPS_STATE',
  'GOVOPS_STATE_KEY',
  'GOVOPS_WEBHOOK_HEALTH_INTERVAL',
] as const;

/** Before the command line is parsed: each of those variables that is empty or blank is removed, as if unset. */
export function dropEmptyOptionVariables(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of VALUE_OPTION_VARIABLES) if (env[name] !== undefined && env[name]!.trim() === '') delete env[name];
}

/** An environment variable's value, an empty or blank one as unset. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}
