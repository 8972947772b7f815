/**
 * `govops <command> ...` builds the root and that command only (src/cli/commands/by-name.ts, main.ts); the
 * whole tree (program.ts) serves `--help` and everything else. Both must declare the same commands, with the
 * same help, options and subcommands, or a command would behave differently depending on how it was reached.
 */
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS, commandLoader } from '../../src/cli/commands/by-name.js';
import { buildProgram } from '../../src/cli/program.js';
import { COMMAND_SUMMARIES } from '../../src/cli/commands/summaries.js';
import { rootHelpProgram } from '../../src/cli/root-help.js';
import { rootProgram } from '../../src/cli/root.js';
import { VALUE_OPTION_VARIABLES, dropEmptyOptionVariables } from '../../src/cli/empty-env.js';

/** Every command under `cmd` (itself included) by its path, with its help text. */
function helps(cmd: Command, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (c: Command, path: string) => {
    out.set(path, c.helpInformation());
    for (const sub of c.commands) walk(sub, `${path} ${sub.name()}`);
  };
  walk(cmd, prefix || cmd.name());
  return out;
}

describe('the command tree by command name', () => {
  it('has a loader for exactly the commands of the whole tree', () => {
    expect(Object.keys(COMMAND_LOADERS).sort()).toEqual(buildProgram().commands.map((c) => c.name()).sort());
    expect(commandLoader('toString')).toBeUndefined();
    expect(commandLoader(undefined)).toBeUndefined();
    expect(commandLoader('--help')).toBeUndefined();
  });

  it('builds each command as the whole tree does: same help, options and subcommands', async () => {
    const whole = buildProgram();
    for (const [name, load] of Object.entries(COMMAND_LOADERS)) {
      const root = rootProgram();
      (await load())(root);
      expect(root.commands.map((c) => c.name())).toEqual([name]);
      const alone = root.commands[0]!;
      const inWhole = whole.commands.find((c) => c.name() === name)!;
      expect(helps(alone)).toEqual(helps(inWhole));
      expect(alone.options.map((o) => [o.flags, o.defaultValue, o.envVar])).toEqual(inWhole.options.map((o) => [o.flags, o.defaultValue, o.envVar]));
      // the root's settings reach the command either way (usage errors point at --help)
      expect(root.options.map((o) => o.flags)).toEqual(whole.options.map((o) => o.flags));
    }
  });
});

describe('`govops --help` from the commands\' summaries', () => {
  it('prints the whole tree\'s root help, at every width', () => {
    for (const width of [40, 80, 120, 200]) {
      const whole = buildProgram().configureOutput({ getOutHelpWidth: () => width });
      const fromSummaries = rootHelpProgram().configureOutput({ getOutHelpWidth: () => width });
      expect(fromSummaries.helpInformation()).toBe(whole.helpInformation());
    }
  });

  it('has a summary for exactly the commands of the whole tree, in its order', () => {
    expect(Object.keys(COMMAND_SUMMARIES)).toEqual(buildProgram().commands.map((c) => c.name()));
  });
});

describe('option variables set empty', () => {
  it('the list of value options read as unset when empty is every option of the tree that takes a value from a variable', () => {
    const found = new Set<string>();
    const walk = (c: Command): void => {
      for (const o of c.options) if (o.envVar && (o.required || o.optional)) found.add(o.envVar);
      c.commands.forEach(walk);
    };
    walk(buildProgram());
    expect([...found].sort()).toEqual([...VALUE_OPTION_VARIABLES].sort());
  });

  it('dropEmptyOptionVariables removes those that are empty or blank and nothing else', () => {
    const env: NodeJS.ProcessEnv = { GOVOPS_PATH: '', GOVOPS_BRANCH: '  ', GOVOPS_DIR: 'manifests', GOVOPS_SECRET_DB: '', GOVOPS_TOKEN: '' };
    dropEmptyOptionVariables(env);
    expect(env).toEqual({ GOVOPS_DIR: 'manifests', GOVOPS_SECRET_DB: '', GOVOPS_TOKEN: '' });
  });
});

describe("README's list of the commands that read manifests", () => {
  it('names every command that takes manifest paths (and run), and each takes --secrets-dir and --secret-env-prefix', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const sentence = /Commands that read manifests \(([^)]*)\) take/.exec(readme.replace(/\s+/g, ' '));
    expect(sentence, 'the sentence in the CLI reference').not.toBeNull();
    const listed = [...sentence![1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort();
    const all = helps(buildProgram(), 'govops');
    const readers = [...all]
      .filter(([path, help]) => path === 'govops run' || /^Usage: .*\[paths\.\.\.\]/m.test(help))
      .map(([path]) => path.replace(/^govops /, ''))
      .sort();
    expect(listed).toEqual(readers);
    for (const name of readers) {
      const help = all.get(`govops ${name}`)!;
      expect(help, name).toContain('--secrets-dir');
      expect(help, name).toContain('--secret-env-prefix');
    }
  });
});
