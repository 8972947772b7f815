/** Run the built CLI as a user would (a real process), capturing output and exit code. */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The `govops` command, as package.json's `bin` names it (dist/cli/govops.cjs, built from src/cli/bin.ts). */
export const CLI = fileURLToPath(
  new URL(`../../${(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { bin: { govops: string } }).bin.govops}`, import.meta.url),
);
/** The ES module the command loads for everything but the root's help and version (it also runs on its own). */
export const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runGovops(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; input?: string; timeoutMs?: number; umask?: number; entry?: string } = {},
): Promise<CliResult> {
  // `entry`: another script to run than the command (MAIN: the ES modules tsc built, as they are)
  const script = options.entry ?? CLI;
  // With `umask`, started by a shell that sets it first (a worker thread cannot set its process's umask).
  const [command, argv] =
    options.umask === undefined
      ? [process.execPath, [script, ...args]]
      : ['/bin/sh', ['-c', `umask ${options.umask.toString(8).padStart(3, '0')} && exec "$0" "$@"`, process.execPath, script, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}
