/**
 * Switches that an environment variable can turn on (`--no-adopt` / GOVOPS_NO_ADOPT, `--auto-retry-failed` /
 * GOVOPS_AUTO_RETRY_FAILED). commander turns a switch on when its variable is set at all, so `GOVOPS_NO_ADOPT=false`
 * (what a Kubernetes manifest or a CI file writes to say "off") turned the guard on. Before a command runs, the
 * variable's value is read: true/1/yes/on turns the switch on, false/0/no/off or empty leaves it as if the variable
 * were unset, and anything else is a usage error naming the variable (a typo must not silently pick a side).
 * The command line still wins over the variable.
 */
import type { Command } from './commander.js';
import { UserError } from '../errors.js';

const ON = new Set(['true', '1', 'yes', 'on']);
const OFF = new Set(['false', '0', 'no', 'off', '']);

/** The switch's state a variable's text asks for; throws a UserError for a value that is neither. */
export function switchFromEnv(name: string, value: string): boolean {
  const text = value.trim().toLowerCase();
  if (ON.has(text)) return true;
  if (OFF.has(text)) return false;
  throw new UserError(`${name} must be true or false (also 1/0, yes/no, on/off), got "${value}"`, `set ${name}=true to turn it on, or unset it`);
}

/**
 * For every switch of the command that took its value from its variable: undo it when the variable says off (the
 * switch's default comes back, as if unset), or fail on a value that is neither on nor off.
 */
export function resolveSwitchesFromEnv(action: Command, env: NodeJS.ProcessEnv = process.env): void {
  for (const option of action.options) {
    if (!option.envVar || option.required || option.optional) continue; // a switch takes no value
    const key = option.attributeName();
    if (action.getOptionValueSource(key) !== 'env') continue;
    const value = env[option.envVar];
    if (value === undefined || switchFromEnv(option.envVar, value)) continue;
    action.setOptionValueWithSource(key, option.negate ? true : (option.defaultValue as unknown), 'default');
  }
}

/**
 * Whether a switch's variable turns it on, for a command without that switch that says what one with it will do
 * (`state forget`, `webhooks list` on GOVOPS_NO_ADOPT). A value that is neither on nor off counts as off here: the
 * commands with the switch refuse it.
 */
export function envSwitchOn(name: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env[name];
  if (value === undefined) return false;
  try {
    return switchFromEnv(name, value);
  } catch {
    return false;
  }
}
