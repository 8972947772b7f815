/**
 * An error nothing caught (a bug, or an `error` event no listener took) ends govops with exit code 1, as Node would,
 * but reported as any fatal error: through the redactor and printable. Node's own report wrote the message and the
 * stack as they were. Provoked in a real process by a module preloaded with NODE_OPTIONS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runGovops } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function preload(code: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'govops-crash-'));
  dirs.push(dir);
  const file = path.join(dir, 'boom.mjs');
  // Fails once govops listens for uncaught errors (a fixed delay raced its loading on a busy machine).
  const once = `const once = (fail) => { const t = setInterval(() => { if (process.listenerCount('uncaughtException') > 0) { clearInterval(t); fail(); } }, 5); };\n`;
  await writeFile(file, once + code);
  return file;
}

describe('an error nothing caught', () => {
  for (const [what, code] of [
    ['an uncaught exception', `once(() => { throw new Error('late failure at https://user:pw-1234@db.example.com/x\\n\\u001b[2Jcleared'); });`],
    ['an unhandled rejection', `once(() => { Promise.reject(new Error('late failure at https://user:pw-1234@db.example.com/x\\n\\u001b[2Jcleared')); });`],
  ] as const) {
    it(`${what}: exit 1, one redacted and printable report on stderr`, async () => {
      const file = await preload(code);
      const r = await runGovops(['sandbox', '--port', '0'], { env: { NODE_OPTIONS: `--import ${file}` }, timeoutMs: 20_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('error: late failure at https://***@db.example.com/x');
      expect(r.stderr).toContain('\\x1b[2Jcleared');
      expect(r.stderr).not.toContain('pw-1234');
      expect(r.stderr).not.toContain('\u001b[2J');
    });
  }
});
