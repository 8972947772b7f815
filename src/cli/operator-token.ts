/**
 * The API token registered as one of the run's own credentials before any manifest is read. A command that connects
 * only after resolving the manifests' secrets (preview resolves both revisions first; scripts offline never
 * connects) let a manifest's `fromFile` read the token a CI job wrote beside the manifests (`--token-file token`):
 * the refusal of govops' own credentials (manifests/secrets.ts) knows only the values registered by then.
 */
import { readFileSync, statSync } from 'node:fs';
import type { Command } from './commander.js';
import { registerSecrets } from '../util/redact.js';

/**
 * Best effort: a missing or unreadable token is the connection's error, reported where the command connects. Only a
 * regular file is read here (`--token-file /dev/stdin` is read once, by the connection); `fromFile` reads nothing else.
 */
export function registerOperatorToken(action: Command, env: NodeJS.ProcessEnv = process.env): void {
  if (!action.options.some((o) => o.attributeName() === 'tokenFile')) return;
  const file = action.getOptionValue('tokenFile') as string | undefined;
  try {
    if (file === undefined) registerSecrets(env.GOVOPS_TOKEN?.trim());
    else if (statSync(file).isFile()) registerSecrets(readFileSync(file, 'utf8').trim());
  } catch {
    // reported by the connection (resolveConnection), which reads it again
  }
}
