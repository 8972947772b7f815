/**
 * The README's two walkthroughs, run as written (`npx govops` is the built CLI): "from a hand-configured service to
 * a repository in three commands" against a sandbox holding the examples, and "dev and prod from one repository"
 * with the kubectl kustomize on the machine.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { EXAMPLES, exampleEnv } from '../apply/harness.js';
import { CLI, runGovops } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const sh = promisify(execFile);

/** The lines of the first ```sh block after a heading of the README, comments dropped. */
async function block(heading: string): Promise<string[]> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`## ${heading}`);
  expect(at, heading).toBeGreaterThan(-1);
  const start = readme.indexOf('```sh\n', at) + 6;
  return readme
    .slice(start, readme.indexOf('```', start))
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

async function bash(line: string, cwd: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  const command = line.replaceAll('npx govops', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`);
  return sh('bash', ['-o', 'pipefail', '-c', command], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', ...env }, timeout: 60_000 });
}

let sandbox: SandboxHandle | undefined;
let dir: string | undefined;
afterEach(async () => {
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  sandbox = undefined;
  dir = undefined;
});

describe('README walkthroughs', () => {
  it('from a hand-configured service to a repository in three commands', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-readme-export-'));
    const conn = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    // "configured by hand": the examples applied with another state, then forgotten
    await cp(EXAMPLES, path.join(dir, 'hand'), { recursive: true });
    const seeded = await runGovops(['apply', 'hand', '--state', 'elsewhere.json'], { cwd: dir, env: { ...exampleEnv(), ...conn } });
    expect(seeded.code, seeded.stderr).toBe(0);
    await rm(path.join(dir, 'hand'), { recursive: true });

    const [exportLine, loadLine, planLine, ...rest] = await block('From a hand-configured service to a repository in three commands');
    expect(rest).toEqual([]);
    const exported = await bash(exportLine!, dir, conn);
    // the team fills in a copy of the template with the real credentials
    const template = await readFile(path.join(dir, 'manifests', 'secrets.env.template'), 'utf8');
    await writeFile(path.join(dir, 'my-secrets.env'), template.replace(/^([A-Z0-9_]+)=$/gm, '$1=real-value-of-$1'));
    expect(exported.stdout).toContain('Recorded');
    const planned = await bash(`${loadLine} && ${planLine}`, dir, conn);
    expect(planned.stdout).toMatch(/Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 18 to adopt\./);
    // and the first apply records them without a write
    const writes = sandbox.requests().filter((r) => r.method !== 'GET').length;
    const applied = await bash(`${loadLine} && npx govops apply manifests && npx govops plan manifests --detailed-exitcode`, dir, conn);
    expect(applied.stdout).toContain('No changes');
    expect(sandbox.requests().filter((r) => r.method !== 'GET').length).toBe(writes);
  });

  it('dev and prod from one repository', async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 10 });
    dir = await mkdtemp(path.join(tmpdir(), 'govops-readme-env-'));
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_WAREHOUSE_PASSWORD: 'pw1234', GOVOPS_SECRET_WAREHOUSE_ADMIN_PASSWORD: 'apw1234' };
    const lines = await block('Dev and prod from one repository');
    expect(lines).toHaveLength(2);
    const validated = await bash(lines[0]!.replace('examples/', `${ROOT}examples/`), dir, env);
    expect(validated.stderr).toContain('3 valid manifests: 0 errors, 0 warnings');
    const planned = await bash(lines[1]!.replace('examples/', `${ROOT}examples/`), dir, env);
    expect(planned.stdout).toContain('Plan: 4 to create, 0 to update, 0 to replace, 0 to delete');
  });
});
