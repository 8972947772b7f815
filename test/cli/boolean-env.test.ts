/**
 * Switches an environment variable turns on (GOVOPS_NO_ADOPT, GOVOPS_AUTO_RETRY_FAILED): commander turns one on when
 * its variable is set at all, so `=false` turned it on. Through the real command tree (its root hook), each command's
 * action replaced by a capture of its options.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { switchFromEnv } from '../../src/cli/boolean-env.js';

const VARS = ['GOVOPS_NO_ADOPT', 'GOVOPS_AUTO_RETRY_FAILED'] as const;
afterEach(() => {
  for (const v of VARS) delete process.env[v];
});

/** The options `govops <args>` would act on, with `env` set. */
async function optionsOf(args: string[], env: Partial<Record<(typeof VARS)[number], string>>): Promise<Record<string, unknown>> {
  Object.assign(process.env, env);
  const program = buildProgram().exitOverride();
  let seen: Record<string, unknown> | undefined;
  const command = program.commands.find((c) => c.name() === args[0])!;
  command.action(() => {
    seen = { ...command.opts(), sources: { adopt: command.getOptionValueSource('adopt'), autoRetryFailed: command.getOptionValueSource('autoRetryFailed') } };
  });
  await program.parseAsync(['node', 'govops', ...args]);
  return seen!;
}

describe('switches from the environment', () => {
  it('reads true/1/yes/on as on and false/0/no/off/empty as off, in any case, trimmed; anything else is an error', () => {
    for (const v of ['true', 'TRUE', '1', 'yes', 'on', ' On ']) expect(switchFromEnv('X', v), v).toBe(true);
    for (const v of ['false', 'False', '0', 'no', 'off', '', '  ']) expect(switchFromEnv('X', v), v).toBe(false);
    expect(() => switchFromEnv('GOVOPS_NO_ADOPT', 'ture')).toThrow(/GOVOPS_NO_ADOPT must be true or false .*got "ture"/);
  });

  it('GOVOPS_NO_ADOPT=false leaves adoption on (plan), =true turns it off; the command line still wins', async () => {
    expect(await optionsOf(['plan', 'm'], { GOVOPS_NO_ADOPT: 'false' })).toMatchObject({ adopt: true, sources: { adopt: 'default' } });
    expect(await optionsOf(['plan', 'm'], { GOVOPS_NO_ADOPT: '' })).toMatchObject({ adopt: true });
    expect(await optionsOf(['plan', 'm'], { GOVOPS_NO_ADOPT: 'true' })).toMatchObject({ adopt: false, sources: { adopt: 'env' } });
    expect(await optionsOf(['plan', 'm', '--no-adopt'], { GOVOPS_NO_ADOPT: 'false' })).toMatchObject({ adopt: false, sources: { adopt: 'cli' } });
    expect(await optionsOf(['plan', 'm'], {})).toMatchObject({ adopt: true, sources: { adopt: 'default' } });
  });

  it('GOVOPS_AUTO_RETRY_FAILED=0 leaves automatic retries off (run); =1 turns them on; a typo is refused', async () => {
    expect((await optionsOf(['run', '--dir', 'm'], { GOVOPS_AUTO_RETRY_FAILED: '0' })).autoRetryFailed).toBeUndefined();
    expect(await optionsOf(['run', '--dir', 'm'], { GOVOPS_AUTO_RETRY_FAILED: '1' })).toMatchObject({ autoRetryFailed: true });
    await expect(optionsOf(['run', '--dir', 'm'], { GOVOPS_AUTO_RETRY_FAILED: 'enabled' })).rejects.toThrow(/GOVOPS_AUTO_RETRY_FAILED must be true or false/);
  });
});
