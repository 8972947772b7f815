/**
 * Start-up cost of the CLI: registering the commands must stay cheap. `govops --help` loads commander
 * and the light command declarations only; each command's heavy modules (HTTP client, sandbox, daemon,
 * ajv, pino...) load when that command runs. Checked by recording every module the real built CLI
 * loads, through a module hook (node --import).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { runGovops, type CliResult } from '../helpers/cli.js';

const EXAMPLES = fileURLToPath(new URL('../../examples', import.meta.url));
let dir: string;
let register: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'govops-lazy-'));
  const hooks = join(dir, 'hooks.mjs');
  await writeFile(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (process.env.GOVOPS_TEST_MODLOG && !url.startsWith('node:')) appendFileSync(process.env.GOVOPS_TEST_MODLOG, url + '\\n');
  return next(url, context);
}
`,
  );
  register = join(dir, 'register.mjs');
  // ESM through the hook; CommonJS (require) through Module's compile step, logged as file URLs too
  await writeFile(
    register,
    `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const Module = createRequire(import.meta.url)('node:module');
const compile = Module.prototype._compile;
Module.prototype._compile = function (content, filename) {
  if (process.env.GOVOPS_TEST_MODLOG) appendFileSync(process.env.GOVOPS_TEST_MODLOG, 'cjs:' + pathToFileURL(filename).href + '\\n');
  return compile.call(this, content, filename);
};
`,
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** One object_store integration manifest named `name` (no secret: it plans and applies as it is). */
const objectStore = (name: string): string =>
  `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: object_store\n  autoBootstrap: false\n  config:\n    name: ${name}\n    cloudAccountId: "123456789012"\n    cloudRegion: eu-west-1\n    cloudLocationRole: arn:aws:iam::123456789012:role/${name}\n    cloudLocationPath: s3://${name}/data\n    authenticationType: auto\n`;

let runs = 0;
/** Run the CLI; return its result and the modules it loaded (URLs, in load order). */
async function loaded(args: string[], env: Record<string, string | undefined> = {}): Promise<{ result: CliResult; modules: string[] }> {
  const log = join(dir, `modules-${++runs}.txt`);
  const result = await runGovops(args, {
    cwd: dir,
    env: { NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, GOVOPS_TEST_MODLOG: log, GOVOPS_URL: undefined, GOVOPS_TOKEN: undefined, ...env },
  });
  const modules = (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { result, modules };
}

const packages = (modules: string[]): string[] =>
  [...new Set(modules.flatMap((u) => (/\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u) ?? []).slice(1)))].sort();
const ours = (modules: string[]): string[] => modules.filter((u) => u.includes('/dist/')).map((u) => u.replace(/.*\/dist\//, ''));
/** Modules imported as ESM (not required as CommonJS). */
const imported = (modules: string[]): string[] => modules.filter((u) => !u.startsWith('cjs:'));

describe('lazy loading of command modules', () => {
  it('--help loads commander and the commands\' summaries only, no declaration', async () => {
    const { result, modules } = await loaded(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: govops');
    expect(packages(modules)).toEqual(['commander']);
    // required through its CommonJS entry, not imported through its ESM wrapper (src/cli/commander.ts)
    expect(imported(modules).filter((u) => u.includes('/node_modules/commander/'))).toEqual([]);
    // the govops command (src/cli/bin.ts, built with the root's help into one CommonJS file: scripts/build-bin.mjs)
    // answers it alone: the root's help from commands/summaries.ts (src/cli/root-help.ts), no ES module of ours, so
    // (the hook's --import makes Node read even a CommonJS entry through its ES module loader: it is listed twice)
    // not the 14 declarations, the root's hooks (the state location, errors, the redactor), the fatal error line
    expect(new Set(ours(modules))).toEqual(new Set(['cli/govops.cjs']));
  });

  it('--version and -V: the same single file; a help asked for with anything else goes to the whole program', async () => {
    const { GOVOPS_VERSION } = await import('../../src/cli/version.js');
    for (const flag of ['--version', '-V']) {
      const { result, modules } = await loaded([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${GOVOPS_VERSION}\n`);
      expect(new Set(ours(modules))).toEqual(new Set(['cli/govops.cjs']));
    }
    const help = await loaded(['-h']);
    expect(new Set(ours(help.modules))).toEqual(new Set(['cli/govops.cjs']));
    // `--help --no-color` is not the root alone: main.js builds the tree, and prints the same text
    const withOption = await loaded(['--no-color', '--help']);
    expect(withOption.result.code).toBe(0);
    expect(withOption.result.stdout).toBe(help.result.stdout);
    expect(ours(withOption.modules)).toContain('cli/main.js');
    expect(ours(withOption.modules)).toContain('cli/program.js');
  });

  it('a command help (plan --help) loads no action module either', async () => {
    const { result, modules } = await loaded(['plan', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--detailed-exitcode');
    expect(packages(modules)).toEqual(['commander']);
  });

  it('validate loads its own action, not the HTTP client, sandbox or daemon', async () => {
    const { result, modules } = await loaded(['validate', EXAMPLES]);
    expect(result.code).toBe(0);
    const files = ours(modules);
    expect(files).toContain('cli/commands/validate-action.js');
    expect(files.filter((f) => f.endsWith('-action.js'))).toEqual(['cli/commands/validate-action.js']);
    for (const heavy of ['api/', 'sandbox/', 'daemon/', 'reconcile/']) expect(files.filter((f) => f.startsWith(heavy))).toEqual([]);
    const pkgs = packages(modules);
    // (the manifest loader bounds its parallel file reads with a plain pool, not p-queue: issue #26)
    for (const p of ['undici', 'prom-client', 'chokidar', 'simple-git', 'p-queue', 'eventemitter3']) expect(pkgs).not.toContain(p);
    // validate logs nothing: the logger (and pino) is made on first use
    expect(pkgs).not.toContain('pino');
    // examples/ has a .govopsignore: the ignore package is required (CommonJS), never imported as ESM (Node's
    // export scan of its source costs ~30 ms)
    expect(packages(modules)).toContain('ignore');
    expect(packages(imported(modules))).not.toContain('ignore');
  });

  it('validate of one file loads the manifest check of its kind only, and no ignore rules', async () => {
    const one = join(dir, 'one.yaml');
    await writeFile(one, objectStore('m'));
    const { result, modules } = await loaded(['validate', one]);
    expect(result.stderr).toContain('1 valid manifest');
    expect(result.code).toBe(0);
    const files = ours(modules);
    expect(files.filter((f) => f.includes('generated'))).toEqual(['manifests/validators/manifest.object_store.generated.cjs']);
    // the command named first is the only declaration built (src/cli/commands/by-name.ts)
    expect(files.filter((f) => f.startsWith('cli/commands/'))).toEqual(['cli/commands/by-name.js', 'cli/commands/validate.js', 'cli/commands/summaries.js', 'cli/commands/validate-action.js']);
    expect(files).not.toContain('cli/program.js');
    const pkgs = packages(modules);
    for (const p of ['ignore', 'yaml', 'ajv-formats', 'pino']) expect(pkgs).not.toContain(p);
  });

  it('plan loads the plan action and the HTTP client (and fails cleanly without a URL)', async () => {
    const { result, modules } = await loaded(['plan', EXAMPLES]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no service URL given');
    const files = ours(modules);
    expect(files).toContain('cli/fatal.js');
    expect(files).toContain('cli/commands/plan-action.js');
    expect(files).toContain('api/client.js');
    expect(files.filter((f) => f.startsWith('sandbox/') || f.startsWith('daemon/'))).toEqual([]);
    // undici's Pool and request API from their own modules, not its index (fetch, WebSocket, cache...): api/transport.ts
    const undici = modules.filter((u) => u.includes('/node_modules/undici/')).map((u) => u.replace(/.*\/node_modules\/undici\//, ''));
    expect(undici).toContain('lib/dispatcher/pool.js');
    expect(undici).toContain('lib/api/api-request.js');
    expect(undici.filter((f) => f === 'index.js' || f.startsWith('lib/web/') || f.startsWith('lib/mock/'))).toEqual([]);
  });

  it('a plan that logs nothing loads neither pino nor the apply modules; apply of the same loads both', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 1 });
    try {
      const folder = join(dir, 'plan-lazy');
      await mkdir(folder, { recursive: true });
      await writeFile(join(folder, 'store.yaml'), objectStore('lazy-store'));
      const state = join(dir, 'plan-lazy.state.json');
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_LOG_LEVEL: undefined };
      const plan = await loaded(['plan', folder, '--state', state], env);
      expect(plan.result.stdout).toContain('lazy-store');
      expect(plan.result.stderr).toBe('');
      expect(plan.result.code).toBe(0);
      expect(packages(plan.modules)).not.toContain('pino');
      expect(ours(plan.modules).filter((f) => f.startsWith('apply/') || f === 'reconcile/apply-stage.js')).toEqual([]);
      // the same run with something to apply: the apply stage is loaded then, and the info lines need pino
      const apply = await loaded(['apply', folder, '--state', state, '--log-level', 'info'], env);
      expect(apply.result.code).toBe(0);
      expect(ours(apply.modules)).toContain('reconcile/apply-stage.js');
      expect(packages(apply.modules)).toContain('pino');
      expect(apply.result.stderr).toContain('applied');
    } finally {
      await sandbox.close();
    }
  });

  it('webhooks: help loads no action; a subcommand loads its action, not the daemon, sandbox or reconcile engine', async () => {
    const help = await loaded(['webhooks', 'history', '--help']);
    expect(help.result.code).toBe(0);
    expect(help.result.stdout).toContain('--failed');
    expect(packages(help.modules)).toEqual(['commander']);
    const { result, modules } = await loaded(['webhooks', 'events']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no service URL given');
    const files = ours(modules);
    expect(files.filter((f) => f.endsWith('-action.js'))).toEqual(['cli/commands/webhooks-action.js']);
    for (const heavy of ['sandbox/', 'daemon/', 'reconcile/']) expect(files.filter((f) => f.startsWith(heavy))).toEqual([]);
  });

  it('healthcheck loads its own action and no HTTP client, sandbox, daemon or logger', async () => {
    const { result, modules } = await loaded(['healthcheck', '--listen', '127.0.0.1:1', '--timeout', '1s']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('unhealthy: http://127.0.0.1:1/healthz');
    expect(packages(modules)).toEqual(['commander']);
    const files = ours(modules);
    expect(files.filter((f) => f.endsWith('-action.js'))).toEqual(['cli/commands/healthcheck-action.js']);
    for (const heavy of ['log.js', 'api/', 'sandbox/', 'daemon/', 'reconcile/', 'manifests/']) {
      expect(files.filter((f) => f.startsWith(heavy))).toEqual([]);
    }
  });
});
