/** Helpers for `npm start` (src/cli/start.ts): example secrets, port fallback, the lines for a second terminal. */
import { randomBytes } from 'node:crypto';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The `fromEnv` names (GOVOPS_SECRET_EXAMPLE_*) the examples use. */
export async function exampleEnvNames(dir: string): Promise<string[]> {
  const names = new Set<string>();
  for (const file of (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    const text = await readFile(join(dir, file), 'utf8');
    for (const m of text.matchAll(/fromEnv:\s*["']?(GOVOPS_SECRET_EXAMPLE_[A-Z0-9_]+)/g)) names.add(m[1]!);
  }
  return [...names].sort();
}

/** A dummy value per name (kept when already set). Keyfile-like names get a JSON document. */
export function exampleEnv(names: string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const existing = env[name];
    if (existing) continue;
    const random = randomBytes(8).toString('hex');
    out[name] = /CREDENTIAL/.test(name)
      ? JSON.stringify({ type: 'service_account', project_id: 'example', private_key_id: random })
      : `example-${random}`;
  }
  return out;
}

/**
 * Start something on `preferred` (0 = any free port); when that port is taken (EADDRINUSE) start it on a
 * free one instead and say so (`busy`), so the banner can tell the user. No probe-then-bind race.
 */
export async function startOnPort<T>(preferred: number, start: (port: number) => Promise<T>): Promise<{ value: T; busy: boolean }> {
  try {
    return { value: await start(preferred), busy: false };
  } catch (err) {
    if (preferred === 0 || (err as NodeJS.ErrnoException | null)?.code !== 'EADDRINUSE') throw err;
    return { value: await start(0), busy: true };
  }
}

/** A value as one POSIX shell word. */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The variables a second terminal needs for this run of `npm start` (the service, its token, the daemon). */
export function connectionEnv(sandboxUrl: string, adminToken: string, daemonUrl: string): Record<string, string> {
  return { GOVOPS_URL: sandboxUrl, GOVOPS_TOKEN: adminToken, GOVOPS_DAEMON_URL: daemonUrl };
}

/** `export A=1 B=2` on one line. */
export function exportLine(vars: Record<string, string>): string {
  return `export ${Object.entries(vars).map(([k, v]) => `${k}=${shellQuote(v)}`).join(' ')}`;
}

/**
 * The file a second terminal sources (`. .govops/env.sh`): the connection of this run and the example
 * secrets, so `govops plan` sees what the daemon sees. Written mode 0600 (it holds the dummy secrets).
 */
export async function writeEnvFile(file: string, connection: Record<string, string>, secrets: Record<string, string>): Promise<void> {
  const lines = [
    `# Written by npm start for this run (pid ${process.pid}); in another terminal in this folder: . ${file.split('/').slice(-2).join('/')}`,
    ...Object.entries({ ...connection, ...secrets }).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
  ];
  await writeFile(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

/**
 * Dummy values for the unset names, kept in `file` (mode 0600) so a restart of `npm start` sees the
 * same secrets and finds everything in sync instead of updating every resource that has one.
 * Names set in `env` are neither generated nor stored.
 */
export async function persistentExampleEnv(names: string[], env: NodeJS.ProcessEnv, file: string): Promise<Record<string, string>> {
  let saved: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) saved = parsed as Record<string, unknown>;
  } catch {
    // missing or unreadable: start over
  }
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of names) {
    if (env[name]) continue;
    // Values saved before the secret prefix existed (GOVOPS_EXAMPLE_*) are kept: no needless rotation.
    const v = saved[name] ?? saved[name.replace(/^GOVOPS_SECRET_EXAMPLE_/, 'GOVOPS_EXAMPLE_')];
    if (typeof v === 'string' && v) out[name] = v;
    else missing.push(name);
  }
  Object.assign(out, exampleEnv(missing, env));
  await writeFile(file, `${JSON.stringify(out, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return out;
}
