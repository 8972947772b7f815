/** `--state PATH` / GOVOPS_STATE, the same for every command that reads or writes the govops state file. */
import { Option } from 'commander';
import { DEFAULT_STATE_PATH } from '../state/store.js';

export function stateOption(purpose = 'govops state file'): Option {
  return new Option('--state <path>', purpose).env('GOVOPS_STATE').default(DEFAULT_STATE_PATH);
}
