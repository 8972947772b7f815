/**
 * Test files share their worker (vitest.config.ts, isolate: false) unless listed in ISOLATED: a file that changes
 * process-wide state must be listed, or a file run after it in the same worker would see that state.
 */
import { readFile, readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ISOLATED } from '../../vitest.config.js';

/** What changes a worker's state for the files after it. */
const PROCESS_WIDE = [
  /process\.env\.[A-Za-z_][A-Za-z0-9_]*\s*=[^=]/, // an env variable set
  /process\.env\[[^\]]+\]\s*=[^=]/,
  /delete\s+process\.env/,
  /\bvi\.(mock|doMock|spyOn|stubEnv|stubGlobal|useFakeTimers)\(/,
  /setFlagsFromString\(/,
  /process\.(chdir|umask)\(/,
];

/** vitest.config.ts's globs (a folder's `**` or a file) as a test on a path. */
const isolated = (file: string): boolean =>
  ISOLATED.some((g) => (g.endsWith('/**/*.test.ts') ? file.startsWith(g.slice(0, -'**/*.test.ts'.length)) : file === g));

describe('test files that share a worker', () => {
  it('change no process-wide state (or are listed in vitest.config.ts ISOLATED)', async () => {
    const offenders: string[] = [];
    const files = (await readdir('test', { recursive: true })).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
    expect(files.length).toBeGreaterThan(100);
    for (const file of files.sort()) {
      if (isolated(file) || file === 'test/docs/isolated-tests.test.ts') continue;
      // code only: a child process's script in a string literal changes nothing of the worker's
      const code = (await readFile(file, 'utf8')).replace(/`(?:[^`\\]|\\.)*`/g, '``');
      for (const pattern of PROCESS_WIDE) if (pattern.test(code)) offenders.push(`${file}: ${pattern.source}`);
    }
    expect(offenders).toEqual([]);
  });

  it('the check finds what it looks for', () => {
    expect(PROCESS_WIDE.some((p) => p.test('process.env.GOVOPS_URL = "x";'))).toBe(true);
    expect(PROCESS_WIDE.some((p) => p.test("vi.mock('node:fs')"))).toBe(true);
    expect(PROCESS_WIDE.some((p) => p.test('if (process.env.GOVOPS_URL === "x")'))).toBe(false);
    expect(isolated('test/daemon/x.test.ts')).toBe(true);
    expect(isolated('test/cli/boolean-env.test.ts')).toBe(true);
    expect(isolated('test/cli/other.test.ts')).toBe(false);
  });
});
