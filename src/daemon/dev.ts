/** Helpers for `npm start` (src/cli/start.ts): example secrets and port fallback. */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

/** The `fromEnv` names (GOVOPS_EXAMPLE_*) the examples use. */
export async function exampleEnvNames(dir: string): Promise<string[]> {
  const names = new Set<string>();
  for (const file of (await readdir(dir)).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    const text = await readFile(join(dir, file), 'utf8');
    for (const m of text.matchAll(/fromEnv:\s*["']?(GOVOPS_EXAMPLE_[A-Z0-9_]+)/g)) names.add(m[1]!);
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

/** `preferred` when it is free on `host`, else 0 (any free port). */
export function portOrFree(preferred: number, host: string): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(0));
    probe.listen(preferred, host, () => probe.close(() => resolve(preferred)));
  });
}
