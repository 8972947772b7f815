/**
 * A service that answers every write with what a test makes of the request (an echo of the secret, re-encoded, cut,
 * spread over lines), and a folder of manifests referring to the secret: what the tests of test/secrets run `govops`
 * against to see that no output holds the value.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sendJson, startServer, type TestServer } from '../api/server.js';
import { runGovops, type CliResult } from './cli.js';

export type Answer = { status: number; json: unknown } | { status: number; text: string };

/** Lists are empty, other reads 404; every write is answered with `answer(parsed body)`. */
export function startAnsweringService(answer: (body: unknown) => Answer): Promise<TestServer> {
  return startServer((req, res) => {
    if (req.method === 'GET' && /^\/(integrations|webhooks)(\?|$)/.test(req.url)) return sendJson(res, 200, []);
    if (req.method === 'GET') return sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: 'no such path' });
    const a = answer(JSON.parse(req.body) as unknown);
    if ('json' in a) return sendJson(res, a.status, a.json);
    res.writeHead(a.status, { 'content-type': 'text/plain' });
    res.end(a.text);
  });
}

/** A string value of the request body's config (where the service finds the value to echo). */
export function configValue(body: unknown, key: string): string {
  return String((body as { config?: Record<string, unknown> }).config?.[key]);
}

/** An integration whose password is GOVOPS_SECRET_PW. */
export const PASSWORD_MANIFEST = `apiVersion: govops/v1
kind: Integration
metadata:
  name: columnar
spec:
  type: columnar_warehouse
  autoBootstrap: true
  config:
    host: columnar-1.example.com
    database: governance
    initialDatabase: dev
    authenticationType: userPassword
    username: govops_system
    password: { fromEnv: GOVOPS_SECRET_PW }
`;

export interface ManifestFolder {
  dir: string;
  /** `govops ARGS` in the folder, with `env`. */
  govops(args: string[], env: Record<string, string>): Promise<CliResult>;
  close(): Promise<void>;
}

/** A folder holding `files` under `manifests/`. */
export async function manifestFolder(files: Record<string, string>): Promise<ManifestFolder> {
  const dir = await mkdtemp(path.join(tmpdir(), 'govops-echo-'));
  await mkdir(path.join(dir, 'manifests'));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, 'manifests', name), text);
  return {
    dir,
    govops: (args, env) => runGovops(args, { cwd: dir, env }),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}
