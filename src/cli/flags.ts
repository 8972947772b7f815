/** Checks of numeric flag values, shared by command actions. */
import { UserError } from '../errors.js';

/** A whole number >= min, or undefined when the flag was not given. */
export function parseCount(flag: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min) throw new UserError(`${flag} must be a whole number >= ${min}, got "${text}"`);
  return Number(text);
}
