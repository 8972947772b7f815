/**
 * The one Git adapter: every git command govops runs (the Git source, `govops preview`, the revision
 * lookup of plan/apply) goes through `runGit`. Same rules everywhere:
 * - the environment is an allow-list (PATH, HOME, locale, proxies, TLS and SSH settings, the
 *   operator's GIT_CONFIG_* pairs): no other variable of the govops process reaches git or its hooks;
 *   callers add what a command needs (`extraEnv`: GIT_INDEX_FILE, the ask-pass script and its token);
 * - never a prompt (GIT_TERMINAL_PROMPT=0), stable English messages (LC_ALL=C);
 * - a timeout (default 120s) and an abort signal, both killing the process;
 * - stderr passes through the one redactor (it can quote a remote URL with a token in it).
 */
import { execFile } from 'node:child_process';
import { redactText } from './redact.js';

export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** Environment variables git needs (auth, proxies, locale); nothing else reaches the git process. */
const ENV_ALLOW = new Set([
  'PATH', 'HOME', 'USER', 'LANG', 'TMPDIR', 'XDG_CONFIG_HOME', 'SSH_AUTH_SOCK',
  'HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR',
  'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SSL_CAINFO', 'GIT_ASKPASS', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM',
]);

/** The allowed part of an environment. */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (ENV_ALLOW.has(k) || /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/.test(k))) out[k] = v;
  }
  return out;
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

/** Run git; a non-zero exit is a result (callers decide), anything else that goes wrong throws GitError. */
export function runGit(args: readonly string[], opts: GitOptions): Promise<GitResult> {
  const env = { ...gitEnv(opts.env ?? process.env), GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...opts.extraEnv };
  const timeout = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const maxBuffer = opts.maxBuffer ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...args],
      { cwd: opts.cwd, env, timeout, killSignal: 'SIGKILL', maxBuffer, ...(opts.signal ? { signal: opts.signal } : {}), encoding: 'utf8' },
      (err, stdout, stderr) => {
        const errText = redactText(String(stderr ?? ''));
        if (!err) return resolve({ code: 0, stdout: String(stdout), stderr: errText });
        const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        const cmd = `git ${args[0] ?? ''}`;
        if (e.name === 'AbortError' || opts.signal?.aborted) return reject(new GitError(`${cmd}: aborted`, args, 'aborted'));
        if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new GitError(`${cmd}: wrote more than ${maxBuffer} bytes (stopped)`, args, 'output'));
        if (e.killed) return reject(new GitError(`${cmd}: no answer within ${Math.round(timeout / 1000)}s (killed)`, args, 'timeout'));
        if (typeof e.code === 'string') return reject(new GitError(`cannot run git: ${e.message}`, args, 'spawn'));
        resolve({ code: typeof e.code === 'number' ? e.code : 1, stdout: String(stdout), stderr: errText });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
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
    return runGit(args, { ...this.opts, ...extra, extraEnv: { ...this.opts.extraEnv, ...extra.extraEnv } });
  }

  /** stdout, or a GitError on a non-zero exit. */
  raw(args: readonly string[], extra: Partial<GitOptions> = {}): Promise<string> {
    return gitOk(args, { ...this.opts, ...extra, extraEnv: { ...this.opts.extraEnv, ...extra.extraEnv } });
  }
}
