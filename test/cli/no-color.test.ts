/**
 * NO_COLOR (no-color.org) and `--no-color`: no ANSI escape on a terminal, for every command. `govops sandbox` (and
 * `run`) log through pino-pretty on a terminal, which colors whatever the environment says when asked to: NO_COLOR
 * must reach it too. The terminal is the real process's stdout and stderr marked as TTYs by a preloaded module (a
 * pseudo-terminal is not available everywhere the tests run); the logs are written to the same pipes.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';

const AS_TTY = 'data:text/javascript,process.stdout.isTTY=true;process.stderr.isTTY=true;';
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[/;

/** `govops sandbox --port 0 --dev` on a (marked) terminal until it says where it listens; then stopped. */
function sandboxOutput(env: Record<string, string | undefined>, extra: string[] = []): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const base: Record<string, string | undefined> = { ...process.env };
    delete base.NO_COLOR;
    delete base.GOVOPS_LOG_LEVEL;
    delete base.GOVOPS_LOG_FORMAT;
    const child = spawn(process.execPath, ['--import', AS_TTY, CLI, 'sandbox', '--port', '0', '--dev', ...extra], {
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const check = (): void => {
      // the log line and the banner are both written when the server listens
      if (stdout.includes('control API:') && stderr.includes('sandbox listening')) child.kill('SIGTERM');
    };
    child.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), check()));
    child.stderr.on('data', (d: Buffer) => ((stderr += d.toString()), check()));
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ stdout, stderr });
    });
  });
}

describe('color on a terminal', () => {
  it('sandbox: pretty colored logs on a terminal (the control), none with --no-color', async () => {
    const colored = await sandboxOutput({});
    expect(colored.stderr).toMatch(ANSI);
    const plain = await sandboxOutput({}, ['--no-color']);
    expect(plain.stderr).toContain('sandbox listening');
    expect(plain.stderr + plain.stdout).not.toMatch(ANSI);
  });

  it('sandbox: NO_COLOR set, no ANSI escape in its logs either', async () => {
    const out = await sandboxOutput({ NO_COLOR: '1' });
    expect(out.stderr).toContain('sandbox listening');
    expect(out.stderr + out.stdout).not.toMatch(ANSI);
  });
});
