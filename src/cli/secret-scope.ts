/** The secret scope of one command run, from its flags and the environment (see secret-options.ts). */
import { UserError } from '../errors.js';
import { secretScopeFrom, type SecretScope } from '../manifests/secret-scope.js';
import type { SecretFlags } from './secret-options.js';

/** A bad value is a usage error naming its flag or variable. */
export function secretScopeFromFlags(flags: SecretFlags, env: Record<string, string | undefined> = process.env, cwd = process.cwd()): SecretScope {
  try {
    return secretScopeFrom(flags, env, cwd);
  } catch (err) {
    throw new UserError((err as Error).message, 'e.g. --secret-env-prefix GOVOPS_SECRET_');
  }
}
