/**
 * Finding the running `govops run` processes and the address each one listens on, the way `run` itself
 * decides it: its own command line and environment, parsed with the CLI's own declarations. Used by
 * `govops healthcheck` (Docker's HEALTHCHECK runs as a separate process that cannot see the container's
 * arguments). Linux: reads /proc/<pid>/cmdline, cwd and environ, which a process of the same user may read.
 */
import type { Command } from 'commander';
import { readdir, readFile, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { buildProgram } from './program.js';
import { dropEmptyOptionVariables } from './empty-env.js';

export interface RunProcess {
  pid: number;
  /** The effective --listen value (flag, else GOVOPS_LISTEN, else the default). */
  listen: string;
  /** false when the process's environment could not be read: the caller's own environment stood in for it. */
  envRead: boolean;
}

type Env = Record<string, string | undefined>;

/**
 * The --listen value `govops run` would use with these arguments (what follows the script path) and this
 * environment; undefined when the arguments are not a valid `run` invocation.
 */
export function runListenFrom(args: readonly string[], daemonEnv: Env): string | undefined {
  // The daemon read an empty option variable (`GOVOPS_LISTEN=`, `GOVOPS_MANUAL_STEPS=`) as unset before parsing
  // (main.ts): so does this parse. Lent as it was, `GOVOPS_LISTEN=` gave the address '', which does not parse, and
  // another empty value made the command line invalid: a healthy daemon was checked at the wrong address, or not found.
  const env: Env = { ...daemonEnv };
  dropEmptyOptionVariables(env);
  const program = buildProgram();
  let listen: string | undefined;
  const all: Command[] = [];
  const collect = (c: Command): void => {
    all.push(c);
    c.commands.forEach(collect);
  };
  collect(program);
  for (const cmd of all) {
    cmd.exitOverride().configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
    // No action may run here: only `run`'s options are wanted.
    cmd.action(() => undefined);
  }
  const run = program.commands.find((c) => c.name() === 'run');
  if (!run) return undefined;
  run.action((_opts: unknown, cmd: Command) => {
    listen = cmd.opts<{ listen: string }>().listen;
  });
  // commander reads an option's environment variable from process.env while parsing: lend it the daemon's.
  const names = [...new Set(all.flatMap((c) => c.options.map((o) => o.envVar).filter((v): v is string => Boolean(v))))];
  const saved = new Map(names.map((n) => [n, process.env[n]]));
  try {
    for (const n of names) {
      if (env[n] === undefined) delete process.env[n];
      else process.env[n] = env[n];
    }
    program.parse([...args], { from: 'user' });
  } catch {
    return undefined;
  } finally {
    for (const [n, v] of saved) {
      if (v === undefined) delete process.env[n];
      else process.env[n] = v;
    }
  }
  return listen;
}

/** NUL-separated strings, as in /proc/<pid>/cmdline and environ. */
function nulList(buf: Buffer): string[] {
  const list = buf.toString('utf8').split('\0');
  if (list.at(-1) === '') list.pop();
  return list;
}

export function parseEnviron(buf: Buffer): Env {
  const env: Env = {};
  for (const entry of nulList(buf)) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

export interface FindOptions {
  /**
   * The CLI's entry scripts (the `govops` command, dist/cli/govops.cjs, and the ES module it loads, dist/cli/main.js,
   * which also runs on its own): a process runs govops when its script resolves to one of these files.
   */
  entries: readonly string[];
  procRoot?: string;
  /** Left out of the search (the caller). */
  selfPid?: number;
  /** Stands in for a process environment that cannot be read. */
  fallbackEnv?: Env;
  /** Only this process. */
  pid?: number;
}

/** Every `govops run` process visible in procRoot whose entry script is one of `entries`, with its effective listen address. */
export async function findRunProcesses(options: FindOptions): Promise<RunProcess[]> {
  const procRoot = options.procRoot ?? '/proc';
  const entries = new Set(await Promise.all(options.entries.map((e) => realpath(e).catch(() => e))));
  const pids =
    options.pid !== undefined
      ? [options.pid]
      : (await readdir(procRoot).catch(() => [] as string[])).filter((n) => /^\d+$/.test(n)).map(Number);
  const found: RunProcess[] = [];
  for (const pid of pids) {
    if (pid === options.selfPid) continue;
    const dir = join(procRoot, String(pid));
    let argv: string[];
    try {
      argv = nulList(await readFile(join(dir, 'cmdline')));
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    if (!argv.includes('run')) continue;
    const cwd = await readlink(join(dir, 'cwd')).catch(() => undefined);
    let script = -1;
    // node [node options] SCRIPT [args]: the first argument resolving to the CLI entry script.
    for (let i = 1; i < Math.min(argv.length, 12) && script < 0; i++) {
      const arg = argv[i]!;
      if (arg.startsWith('-') || (!isAbsolute(arg) && cwd === undefined)) continue;
      const real = await realpath(isAbsolute(arg) ? arg : resolve(cwd!, arg)).catch(() => undefined);
      if (real !== undefined && entries.has(real)) script = i;
    }
    if (script < 0) continue;
    let env: Env | undefined;
    try {
      env = parseEnviron(await readFile(join(dir, 'environ')));
    } catch {
      env = undefined;
    }
    const listen = runListenFrom(argv.slice(script + 1), env ?? options.fallbackEnv ?? {});
    if (listen !== undefined) found.push({ pid, listen, envRead: env !== undefined });
  }
  return found;
}
