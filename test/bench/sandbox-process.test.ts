/**
 * bench/sandbox-process.mjs runs the sandbox in a child process for the benches that measure govops' CPU and memory
 * alone. A bench that stops without closing it (an uncaught error, process.exit, a kill) must not leave the sandbox
 * running: it listens on a port and holds up to 4 GB, one more after each failed run.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../bench/sandbox-process.mjs', import.meta.url));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
let left: number | undefined;
afterEach(() => {
  if (left !== undefined && alive(left)) process.kill(left, 'SIGKILL');
  left = undefined;
});

describe('the sandbox of a bench, in its own process', () => {
  it('ends when the bench that started it ends without closing it', async () => {
    const bench = `import { sandboxProcess } from ${JSON.stringify(MODULE)};
const sb = await sandboxProcess({ transitionMs: 1 });
process.stdout.write(String(sb.pid));
process.exit(1);`;
    // the bench's own exit, not the end of its output (the sandbox shares its stdout and stderr)
    const child = spawn(process.execPath, ['--input-type=module', '-e', bench], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    let code: number | null | undefined;
    await new Promise<void>((resolve) => {
      const done = (): void => void (code !== undefined && out !== '' && resolve());
      child.stdout.on('data', (d: Buffer) => ((out += d.toString()), done()));
      child.on('exit', (c) => ((code = c), done()));
    });
    expect(code).toBe(1);
    left = Number(out);
    expect(left).toBeGreaterThan(0);
    // a bound for a process that never ends, not a speed check
    for (let i = 0; i < 400 && alive(left); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(alive(left)).toBe(false);
  });
});
