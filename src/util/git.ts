/**
 * The one Git adapter: every git command govops runs (the Git source, `govops preview`, the revision
 * lookup of plan/apply) goes through `runGit`. Same rules everywhere:
 * - the environment is an allow-list (PATH, HOME, locale, proxies, TLS and SSH settings, the
 *   operator's GIT_CONFIG_* pairs): no other variable of the govops process reaches git or its hooks;
 *   callers add what a command needs (`extraEnv`: GIT_INDEX_FILE; the Git source's ask-pass script and
 *   token, for `git fetch` only);
 * - git runs no program of the host's configuration that repository content could drive: no hook
 *   (core.hooksPath=/dev/null), no file-system monitor, no submodule recursion, no git-lfs download
 *   (GIT_LFS_SKIP_SMUDGE=1); set after the operator's GIT_CONFIG_* pairs, so they win;
 * - `noFilters`: for a command that checks out, compares or merges work-tree content, every filter driver
 *   configured in any scope (git-lfs, git-crypt, ...) is emptied for that command, and every merge driver runs
 *   `false` (a conflict), so none of the host's programs runs whatever the repository's .gitattributes select (a repository govops owns also gets `* -filter` in
 *   info/attributes: see the Git source);
 * - never a prompt (GIT_TERMINAL_PROMPT=0), stable English messages (LC_ALL=C);
 * - a timeout (default 120s) and an abort signal, both killing git's whole process group (what it started too) and
 *   closing its pipes (a process that left the group cannot keep the command waiting);
 * - stderr passes through the one redactor (it can quote a remote URL with a token in it).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { redactText } from './redact.js';

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** Environment variables git needs (auth, proxies, locale); nothing else reaches the git process. */
const ENV_ALLOW = new Set([
  'PATH', 'HOME', 'USER', 'LANG', 'TMPDIR', 'XDG_CONFIG_HOME', 'SSH_AUTH_SOCK',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR',
  'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SSL_CAINFO', 'GIT_ASKPASS', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM',
]);

/**
 * The allowed part of an environment. PATH keeps its absolute folders only: git and the render command run in folders
 * of repository content, where an empty or relative entry (`.`, `bin`) would find a `git`, `ssh` or `kustomize` a
 * commit put there before the host's.
 */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (ENV_ALLOW.has(k) || /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/.test(k))) out[k] = k === 'PATH' ? absoluteEntries(v) : v;
  }
  return out;
}

/** A search path without its empty and relative entries. */
export function absoluteEntries(searchPath: string): string {
  return searchPath
    .split(path.delimiter)
    .filter((dir) => path.isAbsolute(dir))
    .join(path.delimiter);
}

export interface GitOptions {
  cwd: string;
  /** Where allowed variables are taken from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Set as given, after the allow-list (e.g. GIT_INDEX_FILE, GIT_ASKPASS). */
  extraEnv?: Record<string, string>;
  /** Kill the command after this long (default 120s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Written to the command's stdin. */
  input?: string;
  /** Largest stdout accepted (default 64 MiB). */
  maxBuffer?: number;
  /** Configuration for this command, after the operator's and the adapter's (e.g. credential.helper=''). */
  config?: ReadonlyArray<readonly [string, string]>;
  /**
   * The command checks out or compares work-tree content (checkout, checkout-index, status): run it with every
   * configured filter driver emptied (one `git config` listing first, in the same folder and environment).
   */
  noFilters?: boolean;
}

export interface GitResult {
  /** Exit code (0 = success). */
  code: number;
  stdout: string;
  /** Redacted. */
  stderr: string;
}

/** git could not run, timed out, was aborted, or (from `gitOk`) exited non-zero. Message redacted. */
export class GitError extends Error {
  override readonly name = 'GitError';
  constructor(
    message: string,
    readonly args: readonly string[],
    /** `output`: git wrote more than the command's limit (it was stopped). */
    readonly reason: 'spawn' | 'timeout' | 'aborted' | 'exit' | 'output',
    readonly exitCode?: number,
    readonly stderr?: string,
  ) {
    super(redactText(message));
  }
}

function firstLine(text: string): string {
  return text.trim().split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
}

/**
 * Configuration set on every command, after the operator's GIT_CONFIG_* pairs (later pairs win): nothing a
 * repository's content selects or triggers may start a program of the host's configuration with the command's
 * environment (the Git source's `fetch` carries its token). Hooks: the Git source's own repository has none, and
 * the commands govops runs on others (read-tree, checkout-index, status, diff) need none. Submodules are never
 * read (a `.gitmodules` names URLs of its author's choice).
 */
const HARDENING: ReadonlyArray<readonly [string, string]> = [
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['submodule.recurse', 'false'],
];

/** `env` with `pairs` appended to its GIT_CONFIG_COUNT/KEY/VALUE pairs (the operator's come first). */
export function withConfig(env: NodeJS.ProcessEnv, pairs: ReadonlyArray<readonly [string, string]>, args: readonly string[] = []): NodeJS.ProcessEnv {
  const given = env.GIT_CONFIG_COUNT ?? '';
  // git reads the count with strtoul; anything but digits is refused here so our pairs can never be misplaced.
  if (!/^\d*$/.test(given)) throw new GitError(`GIT_CONFIG_COUNT is not a number: "${given}"`, args, 'spawn');
  const start = given === '' ? 0 : Number(given);
  const out: NodeJS.ProcessEnv = { ...env, GIT_CONFIG_COUNT: String(start + pairs.length) };
  pairs.forEach(([key, value], i) => {
    out[`GIT_CONFIG_KEY_${start + i}`] = key;
    out[`GIT_CONFIG_VALUE_${start + i}`] = value;
  });
  return out;
}

/**
 * The drivers of a config section (`filter`, `merge`) named in a `git config -z --name-only` listing: `section.<driver>.<variable>`,
 * the driver's name everything between the first and the last dot; with `variable`, only keys ending in it.
 */
function driversIn(listing: string, section: string, variable?: string): string[] {
  const names = new Set<string>();
  const prefix = `${section}.`;
  for (const key of listing.split('\0')) {
    const last = key.lastIndexOf('.');
    if (!key.toLowerCase().startsWith(prefix) || last <= prefix.length) continue;
    if (variable === undefined || key.slice(last + 1).toLowerCase() === variable) names.add(key.slice(prefix.length, last));
  }
  return [...names];
}

/** The filter drivers configured in any scope (system, global, repository, GIT_CONFIG_* pairs), by name. */
export function filterDrivers(listing: string): string[] {
  return driversIn(listing, 'filter');
}

/** The merge drivers configured in any scope, by name (`merge.<driver>.driver`; `merge.<variable>` settings are no driver). */
export function mergeDrivers(listing: string): string[] {
  return driversIn(listing, 'merge', 'driver');
}

/** Pairs that make every named merge driver run `false`: the file conflicts, and no command of the host's runs. */
export function noMergeDriverConfig(drivers: readonly string[]): Array<[string, string]> {
  return drivers.map((d): [string, string] => [`merge.${d}.driver`, 'false']);
}

/** Pairs that make every named driver a no-op: no clean, smudge or process command, and not required. */
export function noFilterConfig(drivers: readonly string[]): Array<[string, string]> {
  return drivers.flatMap((d): Array<[string, string]> => [
    [`filter.${d}.clean`, ''],
    [`filter.${d}.smudge`, ''],
    [`filter.${d}.process`, ''],
    [`filter.${d}.required`, 'false'],
  ]);
}

/** Run git; a non-zero exit is a result (callers decide), anything else that goes wrong throws GitError. */
export async function runGit(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  const base = withConfig(
    { ...gitEnv(opts.env ?? process.env), GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', GIT_LFS_SKIP_SMUDGE: '1', ...opts.extraEnv },
    [...HARDENING, ...(opts.config ?? [])],
    args,
  );
  let env = base;
  if (opts.noFilters) {
    const listing = await spawnGit(['config', '-z', '--name-only', '--get-regexp', '^(filter|merge)\\.'], { ...opts, maxBuffer: 1024 * 1024 }, base, undefined);
    // Exit 1: no such key. Anything else: the drivers are unknown, so the command does not run.
    if (listing.code !== 0 && listing.code !== 1) {
      throw new GitError(`git ${args[0] ?? ''}: cannot list the filter drivers to disable (git config exit ${listing.code}): ${firstLine(listing.stderr)}`, args, 'exit', listing.code, listing.stderr);
    }
    const names = listing.code === 0 ? listing.stdout : '';
    env = withConfig(base, [...noFilterConfig(filterDrivers(names)), ...noMergeDriverConfig(mergeDrivers(names))], args);
  }
  return spawnGit(args, opts, env, opts.input);
}

function spawnGit(args: readonly string[], opts: GitOptions, env: NodeJS.ProcessEnv, input: string | undefined): Promise<GitResult> {
  const timeout = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const maxBuffer = opts.maxBuffer ?? 64 * 1024 * 1024;
  const cmd = `git ${args[0] ?? ''}`;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new GitError(`${cmd}: aborted`, args, 'aborted'));
    // git runs in its own process group (detached), and a timeout, an abort or too much output kills the whole
    // group: what git started (git-remote-https, ssh, upload-pack, an alias) would otherwise stay behind, waiting
    // on a remote that never answers, one more at every fetch tick, with the fetch's environment (the token).
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn('git', [...args], { cwd: opts.cwd, env, detached: true, stdio: 'pipe' });
    } catch (err) {
      return reject(new GitError(`cannot run git: ${(err as Error).message}`, args, 'spawn'));
    }
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let failure: GitError | undefined;
    const stop = (why: GitError): void => {
      failure ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL'); // the group is gone already (or git never started)
      }
      // A process that left the group (ssh's ControlPersist master, a setsid helper) may still hold the pipes: without
      // this the command waited for it to close them, for as long as it lived, and the Git source fetched no more.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    // Each stream has its own limit (as execFile's maxBuffer).
    const collect = (into: Buffer[]): ((d: Buffer) => void) => {
      let bytes = 0;
      return (d) => {
        bytes += d.length;
        if (bytes > maxBuffer) stop(new GitError(`${cmd}: wrote more than ${maxBuffer} bytes (stopped)`, args, 'output'));
        else into.push(d);
      };
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(errOut));
    const onAbort = (): void => stop(new GitError(`${cmd}: aborted`, args, 'aborted'));
    const timer = setTimeout(() => stop(new GitError(`${cmd}: no answer within ${Math.round(timeout / 1000)}s (killed)`, args, 'timeout')), timeout);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (e) => {
      failure ??= new GitError(`cannot run git: ${e.message}`, args, 'spawn');
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = redactText(Buffer.concat(errOut).toString('utf8'));
      resolve({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.on('error', () => undefined); // git exited before reading its input: its exit code says why
    child.stdin.end(input);
  });
}

/** Run git; stdout on success, a GitError naming the command and git's first stderr line otherwise. */
export async function gitOk(args: readonly string[], opts: GitOptions): Promise<string> {
  const r = await runGit(args, opts);
  if (r.code !== 0) {
    throw new GitError(`git ${args[0] ?? ''} failed (exit ${r.code}): ${firstLine(r.stderr) || firstLine(r.stdout)}`, args, 'exit', r.code, r.stderr);
  }
  return r.stdout;
}

/** A Git command runner bound to a folder and settings (the Git source keeps one per repository). */
export class Git {
  constructor(private readonly opts: GitOptions) {}

  run(args: readonly string[], extra: Partial<GitOptions> = {}): Promise<GitResult> {
    return runGit(args, this.merged(extra));
  }

  /** stdout, or a GitError on a non-zero exit. */
  raw(args: readonly string[], extra: Partial<GitOptions> = {}): Promise<string> {
    return gitOk(args, this.merged(extra));
  }

  private merged(extra: Partial<GitOptions>): GitOptions {
    return { ...this.opts, ...extra, extraEnv: { ...this.opts.extraEnv, ...extra.extraEnv }, config: [...(this.opts.config ?? []), ...(extra.config ?? [])] };
  }
}
