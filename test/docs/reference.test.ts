/**
 * The reference pages tell users what to type: the command tables of README.md ("CLI reference",
 * "Configuration") and of docs/webhooks.md and docs/operator.md, the metrics README.md, docs/deploy.md and
 * docs/webhooks.md name, and the environment variables of the Configuration table. Held here to the command tree
 * (src/cli/program.ts), the metric registrations and the sources, read as text: a flag, a default, a variable or a
 * metric renamed on one side and not the other fails.
 */
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { read, sources } from './repo-files.js';

const program = buildProgram();

/** A command by its path (`state adopt`), or undefined. */
function command(path: string): Command | undefined {
  let c: Command | undefined = program;
  for (const name of path.split(' ')) c = c?.commands.find((s) => s.name() === name);
  return c;
}

/** Its long option, or a global one. */
function option(cmd: Command, flag: string): Option | undefined {
  return cmd.options.find((o) => o.long === flag) ?? program.options.find((o) => o.long === flag);
}

/** The default an option declares: commander's, else the one its description states (`default 24h`). */
function declaredDefault(o: Option): string | undefined {
  if (o.defaultValue !== undefined) return String(o.defaultValue);
  return /\bdefault:? "?([^\s";)]+)"?/.exec(o.description)?.[1];
}

/** The table rows of a page whose first cell is a `govops ...` command. */
function commandRows(page: string): string[] {
  return read(page)
    .split('\n')
    .filter((l) => l.startsWith('| `govops '));
}

/** The commands a row documents: `govops state list / show NAME / ...` is every subcommand it names. */
function rowCommands(row: string): string[] {
  const first = row.split(' | ')[0]!.replace(/^\| /, '');
  const words = first.replace(/`/g, '').split(/[\s/]+/).filter(Boolean);
  const top = words[1]!;
  const cmd = command(top);
  expect(cmd, `${first}: no command ${top}`).toBeDefined();
  if (cmd!.commands.length === 0) return [top];
  const subs = [...new Set(words.filter((w) => cmd!.commands.some((s) => s.name() === w)))];
  expect(subs.length, `${first}: no subcommand of ${top}`).toBeGreaterThan(0);
  return subs.map((s) => `${top} ${s}`);
}

/** The code spans of a row, link targets left out (`[x](docs/operator.md#saved-plans-plan---out-apply-file)`). */
function codeSpans(row: string): Array<{ text: string; after: string }> {
  const text = row.replace(/\]\([^)]*\)/g, ']');
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => ({ text: m[1]!, after: text.slice(m.index + m[0].length) }));
}

/** A value written after a flag that stands for itself (not FILE, N, `'CMD ARGS'`, `require|trust`, `[REASON]`). */
const concrete = (v: string): boolean => !/^[A-Z[']/.test(v) && !/[|…]|\.\.\./.test(v);

interface Finding {
  row: string;
  problem: string;
}

/**
 * Each flag a row names (in its code spans) is an option of one of its commands or a global one; a flag written
 * with a value that stands for itself (`--limit 20`) gives the default that option declares, unless the option
 * takes a list of choices (`--manual-steps trust` names a choice) or the row says it is off by default.
 * A span that starts with another command (`plan --out FILE`) is checked against that command.
 */
function checkRow(row: string): Finding[] {
  const found: Finding[] = [];
  const cmds = rowCommands(row).map((p) => command(p)!);
  const label = row.split(' | ')[0]!.replace(/^\| /, '');
  for (const span of codeSpans(row)) {
    // `[--since 24h]`, `--failed\|--succeeded`: options in brackets and alternatives are read one by one
    const words = span.text.replace(/^govops /, '').split(/[\s[\]]+|\\?\|/).filter(Boolean);
    const other = command(words[0]!);
    const targets = other && !cmds.includes(other) && !cmds.some((c) => c.parent === other) ? [other] : cmds;
    for (let i = 0; i < words.length; i++) {
      const flag = /^--[a-z][a-z0-9-]*$/.exec(words[i]!)?.[0];
      if (!flag) continue;
      const opts = targets.map((c) => option(c, flag)).filter((o): o is Option => o !== undefined);
      if (opts.length === 0) {
        found.push({ row: label, problem: `${flag} is not an option of ${targets.map((c) => c.name()).join(', ')}` });
        continue;
      }
      const value = words[i + 1];
      if (value === undefined || value.startsWith('-') || !concrete(value)) continue;
      for (const o of opts) {
        if (o.argChoices) continue;
        const def = declaredDefault(o);
        if (def === value) continue;
        if ((def === undefined || def === 'off') && /off by default/.test(row)) continue;
        found.push({ row: label, problem: `\`${flag} ${value}\` but the option's default is ${def === undefined ? 'none' : def}` });
      }
    }
  }
  return found;
}

describe('command tables: flags and defaults as the commands declare them', () => {
  for (const page of ['README.md', 'docs/webhooks.md', 'docs/operator.md']) {
    it(page, () => {
      const rows = commandRows(page);
      expect(rows.length, `${page} has command tables`).toBeGreaterThan(0);
      expect(rows.flatMap(checkRow)).toEqual([]);
    });
  }

  it("README's Configuration table: each flag exists, with the default it gives", () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf("## The daemon's endpoints"));
    const rows = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Setting') && !l.startsWith('|---'));
    expect(rows.length).toBeGreaterThan(20);
    const all: Command[] = [];
    const walk = (c: Command): void => {
      all.push(c);
      c.commands.forEach(walk);
    };
    walk(program);
    const found: Finding[] = [];
    for (const row of rows) {
      const flagCell = row.split(' | ')[1] ?? '';
      for (const span of codeSpans(`| ${flagCell} |`)) {
        const words = span.text.split(/[\s[\]]+|\\?\|/).filter(Boolean);
        const flag = /^--[a-z][a-z0-9-]*$/.exec(words[0]!)?.[0];
        if (!flag) continue;
        const opts = all.flatMap((c) => c.options.filter((o) => o.long === flag));
        if (opts.length === 0) {
          found.push({ row: row.slice(0, 60), problem: `${flag} is no command's option` });
          continue;
        }
        const value = words[1];
        if (value === undefined || !concrete(value)) continue;
        const defaults = new Set(opts.filter((o) => !o.argChoices).map(declaredDefault));
        if (defaults.size === 0 || defaults.has(value)) continue;
        if ((defaults.has(undefined) || defaults.has('off')) && /off by default/.test(row)) continue;
        found.push({ row: row.slice(0, 60), problem: `\`${flag} ${value}\` but the default is ${[...defaults].join(' / ')}` });
      }
    }
    expect(found).toEqual([]);
  });

  it('finds a wrong default and an unknown flag (the check is not a no-op)', () => {
    expect(checkRow('| `govops webhooks history [NAME]` | `--limit 50`, `--since 24h`, `--nope` | 0 / 1 |').map((f) => f.problem)).toEqual([
      "`--limit 50` but the option's default is 20",
      "`--since 24h` but the option's default is none",
      '--nope is not an option of history',
    ]);
    expect(checkRow('| `govops webhooks retry ID...` | `--since 24h`, `--max 50`, `--concurrency 4` | 0 |')).toEqual([]);
  });
});

describe('environment variables of the Configuration table', () => {
  it('each is read by govops', () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf("## The daemon's endpoints"));
    const rows = section.split('\n').filter((l) => l.startsWith('| '));
    const names = new Set(rows.flatMap((r) => [...(r.split(' | ')[2] ?? '').matchAll(/\b(GOVOPS_[A-Z0-9_]+|GITHUB_TOKEN|CI_JOB_TOKEN)\b/g)].map((m) => m[1]!)));
    expect(names.size).toBeGreaterThan(20);
    const src = sources('src').join('\n');
    // read where it is a string (env.GOVOPS_X, env['GOVOPS_X'], .env('GOVOPS_X')), not merely named in a comment
    const unread = [...names].filter((n) => !new RegExp(`(['"\`])${n}\\1|env\\.${n}\\b|env\\?\\.${n}\\b`).test(src));
    expect(unread).toEqual([]);
  });
});

describe('metrics', () => {
  const registered = [...new Set([...sources('src').join('\n').matchAll(/name: '(govops_[a-z_]+)'/g)].map((m) => m[1]!))].sort();

  it('the registrations are found', () => {
    expect(registered.length).toBeGreaterThan(25);
    expect(registered).toContain('govops_reconcile_total');
  });

  it('every metric the pages name is registered, and every registered metric is named in full on a page', () => {
    const pages = ['README.md', 'docs/deploy.md', 'docs/webhooks.md', 'docs/operator.md'].map(read).join('\n');
    const named = new Set([...pages.matchAll(/\b(govops_[a-z_]*[a-z])\b(?!\*)/g)].map((m) => m[1]!));
    // `govops_webhook_*` is a family, not a metric; the others are a user, a role and a channel of the examples
    for (const n of ['govops_webhook', 'govops_admin', 'govops_system', 'govops_role', 'govops_hooks']) named.delete(n);
    expect([...named].filter((n) => !registered.includes(n)).sort()).toEqual([]);
    expect(registered.filter((n) => !named.has(n))).toEqual([]);
  });
});

describe('docs/pull-requests.md: `govops comment` outside the action', () => {
  it('names every token variable it reads (else a newcomer gets "no GitHub token" with nothing in the page to say which)', () => {
    const page = read('docs/pull-requests.md');
    const start = page.indexOf('`govops comment FILE` works outside the action too');
    expect(start).toBeGreaterThan(0);
    const paragraph = page.slice(start, page.indexOf('\n\n', start));
    const context = read('src/comments/context.ts');
    const tokens = [...new Set([...context.matchAll(/env\.([A-Z_]*TOKEN)\b/g)].map((m) => m[1]!))];
    expect(tokens.length).toBeGreaterThanOrEqual(4);
    expect(tokens.filter((t) => !paragraph.includes(`\`${t}\``))).toEqual([]);
  });
});
