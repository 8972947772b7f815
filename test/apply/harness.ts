/** Shared setup for apply tests: a real sandbox over HTTP, a temp dir, the example secrets. */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops, type CliResult } from '../helpers/cli.js';

export const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

/** Every `fromEnv` name used by the examples, each with a distinctive, greppable value. */
export function exampleEnv(suffix = 'v1'): Record<string, string> {
  const env: Record<string, string> = {};
  for (const f of readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml'))) {
    for (const m of readFileSync(path.join(EXAMPLES, f), 'utf8').matchAll(/fromEnv:\s*([A-Z0-9_]+)/g)) {
      env[m[1]!] = `S3cr3t-${m[1]!.toLowerCase()}-${suffix}`;
    }
  }
  return env;
}

export interface Harness {
  sandbox: SandboxHandle;
  dir: string;
  env: Record<string, string>;
  statePath: string;
  govops(args: string[], extraEnv?: Record<string, string>): Promise<CliResult>;
  client(): ServiceClient;
  writeManifest(file: string, text: string): Promise<void>;
  state(): Promise<{ resources: Array<{ kind: string; name: string; id: string; origin: string; secretFingerprints: Record<string, string> }> }>;
  close(): Promise<void>;
}

export async function harness(options: { transitionMs?: number; examples?: boolean; behaviours?: readonly string[] } = {}): Promise<Harness> {
  const sandbox = await startSandbox({ port: 0, transitionMs: options.transitionMs ?? 50, ...(options.behaviours ? { behaviours: options.behaviours } : {}) });
  const dir = await mkdtemp(path.join(tmpdir(), 'govops-apply-'));
  if (options.examples) await cp(EXAMPLES, path.join(dir, 'manifests'), { recursive: true, filter: (src) => !src.includes('kubernetes') });
  const env = { ...exampleEnv(), GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
  const statePath = path.join(dir, '.govops', 'state.json');
  const clients: ServiceClient[] = [];
  return {
    sandbox,
    dir,
    env,
    statePath,
    govops: (args, extraEnv = {}) => runGovops(args, { cwd: dir, env: { GOVOPS_LOG_LEVEL: 'info', ...env, ...extraEnv } }),
    client: () => {
      const c = new ServiceClient({ baseUrl: sandbox.url, token: sandbox.adminToken, logger: silentLogger(), retries: 0 });
      clients.push(c);
      return c;
    },
    writeManifest: async (file, text) => {
      await writeFile(path.join(dir, 'manifests', file), text);
    },
    state: async () => JSON.parse(await readFile(statePath, 'utf8')),
    close: async () => {
      for (const c of clients) await c.close();
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The request log as `METHOD path?query` lines. */
/**
 * The requests other than the two live lists. A plan asks for the lists as it starts reading the manifests, an apply
 * as soon as it holds the state lock (src/reconcile/engine.ts, `readEarly`), so even a reconcile of an invalid
 * revision may have sent them (then cancelled): nothing else may be asked of the service for a revision that is
 * rejected.
 */
export function requestsBeyondLists(sandbox: SandboxHandle): string[] {
  return requestLines(sandbox).filter((l) => l !== 'GET /integrations' && l !== 'GET /webhooks');
}

export function requestLines(sandbox: SandboxHandle): string[] {
  return sandbox.requests().map((r) => {
    const q = new URLSearchParams(r.query).toString();
    return `${r.method} ${r.path}${q ? `?${q}` : ''}`;
  });
}
