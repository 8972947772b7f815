/**
 * The daemon's render step (`govops run --render 'kustomize build overlays/prod'`): an operator-configured
 * command run in each revision's folder whose standard output is the revision's manifests (a multi-document
 * YAML stream). The command is operator configuration, never read from the repository:
 * - it is an argv array (the flag's text split on spaces, with '…' and "…" quoting, no expansion): no shell;
 * - its environment is the Git adapter's allow-list (src/util/git.ts `gitEnv`: PATH, HOME, locale, proxies,
 *   TLS): nothing else of govops' environment — tokens, GOVOPS_SECRET_* — is in its environment or what it starts.
 *   It is not a sandbox: it runs as govops' user, so what it runs can read /proc/<govops pid>/environ, the state
 *   file and the secrets folder; the render tool must not run code from the repository (docs/environments.md);
 * - it has a timeout; on timeout or abort its whole process group is killed and its output pipes closed (a process
 *   that left the group cannot keep the render waiting);
 * - stdout is limited (the stream limit); stderr (last lines, redacted) explains a failure.
 * A failure is a `RenderError`; the daemon rejects the revision as it rejects an invalid manifest. A revision with a
 * symbolic link leading out of it is rejected before the command runs (src/sources/links-out.ts).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants as fsc, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { gitEnv } from '../util/git.js';
import { lastChars } from '../util/cut.js';
import { redactText } from '../util/redact.js';

export const DEFAULT_RENDER_TIMEOUT_MS = 60_000;
/** Largest output accepted (the manifest stream limit). */
export const MAX_RENDER_BYTES = 64 * 1024 * 1024;

export interface RenderCommand {
  argv: readonly string[];
  timeoutMs: number;
}

export class RenderError extends Error {
  override readonly name = 'RenderError';
  constructor(
    message: string,
    readonly reason: 'spawn' | 'exit' | 'timeout' | 'aborted' | 'output' | 'links' | 'folder',
  ) {
    super(redactText(message));
  }
}

/** Split the operator's command line into argv: words on spaces, '…' and "…" quoting, backslash escapes. No expansion. */
export function parseRenderCommand(text: string): string[] {
  const argv: string[] = [];
  let word: string | undefined;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
      else if (ch === '\\' && quote === '"' && i + 1 < text.length) word += text[++i]!;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      word ??= '';
    } else if (/\s/.test(ch)) {
      if (word !== undefined) argv.push(word);
      word = undefined;
    } else if (ch === '\\' && i + 1 < text.length) {
      word = (word ?? '') + text[++i]!;
    } else word = (word ?? '') + ch;
  }
  if (quote) throw new Error(`unclosed ${quote} in the render command`);
  if (word !== undefined) argv.push(word);
  if (argv.length === 0) throw new Error('the render command is empty');
  return argv;
}

/** Whether `file` is an executable regular file. */
function executable(file: string): boolean {
  try {
    accessSync(file, fsc.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Why the command could never start, told before the daemon starts (a missing tool would reject every revision while
 * the daemon looked ready): a name found in no folder of the PATH it gets (its absolute folders), or an absolute path
 * that is no executable file. A relative path (`./x`) is the revision's, left to the run; no PATH, left to the run.
 */
export function renderToolProblem(argv0: string, env: NodeJS.ProcessEnv): string | undefined {
  if (path.isAbsolute(argv0)) return executable(argv0) ? undefined : `${argv0} is not an executable file`;
  if (argv0.includes('/')) return undefined;
  const searchPath = gitEnv(env).PATH;
  if (searchPath === undefined) return undefined;
  const dirs = searchPath.split(path.delimiter).filter((d) => d !== '');
  if (dirs.some((dir) => executable(path.join(dir, argv0)))) return undefined;
  return `${argv0} is not in any folder of PATH (${dirs.join(path.delimiter) || 'none absolute'})`;
}

const lastLines = (text: string, n = 5): string => text.trim().split('\n').slice(-n).join('\n');

/** Run the render command in `cwd`; resolves with its standard output. */
export function runRender(cmd: RenderCommand, cwd: string, opts: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<string> {
  const [file, ...args] = cmd.argv;
  const shown = cmd.argv.join(' ');
  // A stop asked for before it starts: an abort listener added now would never fire (the command ran to its timeout).
  if (opts.signal?.aborted) return Promise.reject(new RenderError(`render command ${shown} not started (govops is stopping)`, 'aborted'));
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(file!, args, { cwd, env: { ...gitEnv(opts.env ?? process.env), LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      reject(new RenderError(`render command ${shown}: ${(err as Error).message}`, 'spawn'));
      return;
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: RenderError | undefined;
    const kill = (why: RenderError): void => {
      failure ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL'); // the whole group: what the command started too
      } catch {
        child.kill('SIGKILL');
      }
      // A process that left the group (setsid, a detached spawn) may still hold the output pipes: without this the
      // render would wait for it to close them (for as long as it lives), past the timeout and a shutdown's grace.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => kill(new RenderError(`render command ${shown} did not finish within ${cmd.timeoutMs} ms: killed`, 'timeout')), cmd.timeoutMs);
    const onAbort = (): void => kill(new RenderError(`render command ${shown} aborted (govops is stopping)`, 'aborted'));
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length;
      if (outBytes > MAX_RENDER_BYTES) kill(new RenderError(`render command ${shown} wrote more than ${MAX_RENDER_BYTES} bytes`, 'output'));
      else out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      // redacted before it is cut (src/util/cut.ts): a value split between two chunks is whole in the next one
      err = lastChars(redactText(err + d.toString('utf8')), 8192);
    });
    child.on('error', (e) => {
      // A missing working folder fails the spawn with the command's name and ENOENT, as a command not installed does.
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(cwd) ? `the folder ${cwd} does not exist in this revision (--path)` : e.message;
      failure ??= new RenderError(`render command ${shown}: ${why}`, 'spawn');
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code !== 0) {
        const why = code === null ? `killed by ${signal}` : `exit code ${code}`;
        return reject(new RenderError(`render command ${shown} failed (${why})${err.trim() ? `: ${lastLines(err)}` : ''}`, 'exit'));
      }
      try {
        resolve(new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(out)));
      } catch {
        reject(new RenderError(`render command ${shown} wrote output that is not UTF-8 text`, 'output'));
      }
    });
  });
}
