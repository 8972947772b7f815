/**
 * Start-up cost of the CLI: registering the commands must stay cheap. `govops --help` loads commander
 * and the light command declarations only; each command's heavy modules (HTTP client, sandbox, daemon,
 * ajv, pino...) load when that command runs. Checked by recording every module the real built CLI
 * loads, through a module hook (node --import).
 *
 * The command runs the command line as one CommonJS file (dist/cli/main.cjs, scripts/build-main.mjs), whose modules
 * are initialised in the order the ES modules would be loaded: a module imported on demand is initialised on demand.
 * Which of our modules a command loads is checked on the ES modules tsc built (MAIN, run on its own, the same
 * sources); which packages it loads, on both.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { MAIN, runGovops, type CliResult } from '../helpers/cli.js';

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
  // ESM through the hook; CommonJS (require) from require's cache at exit (whatever compiled them: the command's
  // compiled code, src/cli/code-cache.ts, or Node), logged as file URLs too
  await writeFile(
    register,
    `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const Module = createRequire(import.meta.url)('node:module');
process.on('exit', () => {
  const files = Object.keys(Module._cache).filter((f) => f.startsWith('/'));
  if (process.env.GOVOPS_TEST_MODLOG) appendFileSync(process.env.GOVOPS_TEST_MODLOG, files.map((f) => 'cjs:' + pathToFileURL(f).href + '\\n').join(''));
});
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
interface Loaded {
  result: CliResult;
  modules: string[];
}
/**
 * Run the CLI (the command, or `entry`); return its result and the modules it loaded (URLs: ES modules in load order,
 * then the CommonJS ones).
 */
async function loaded(args: string[], env: Record<string, string | undefined> = {}, entry?: string): Promise<Loaded> {
  const log = join(dir, `modules-${++runs}.txt`);
  const result = await runGovops(args, {
    cwd: dir,
    entry,
    env: { NODE_OPTIONS: `--import ${pathToFileURL(register).href}`, GOVOPS_TEST_MODLOG: log, GOVOPS_URL: undefined, GOVOPS_TOKEN: undefined, ...env },
  });
  const modules = (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  return { result, modules };
}

/**
 * The same run through the command (`bin`) and through the ES modules (`main`, whose modules of ours are listed), at
 * once; both must answer alike.
 */
async function loadedBoth(args: string[], env: Record<string, string | undefined> = {}): Promise<{ bin: Loaded; main: Loaded }> {
  const [bin, main] = await Promise.all([loaded(args, env), loaded(args, env, MAIN)]);
  expect(bin.result.code).toBe(main.result.code);
  expect(bin.result.stdout).toBe(main.result.stdout);
  return { bin, main };
}

/** The packages either run loaded. */
const packagesOf = (both: { bin: Loaded; main: Loaded }): string[] => [...new Set([...packages(both.bin.modules), ...packages(both.main.modules)])].sort();

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
    // not the 14 declarations, the root's hooks (the state location, errors, the redactor), the fatal error line,
    // nor the command line's file (main.cjs)
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
    // `--help --no-color` is not the root alone: the command line builds the tree, and prints the same text
    const withOption = await loadedBoth(['--no-color', '--help']);
    expect(withOption.bin.result.code).toBe(0);
    expect(withOption.bin.result.stdout).toBe(help.result.stdout);
    expect(ours(withOption.bin.modules)).toContain('cli/main.cjs');
    expect(ours(withOption.main.modules)).toContain('cli/main.js');
    expect(ours(withOption.main.modules)).toContain('cli/program.js');
  });

  it('a command help (plan --help) loads no action module either', async () => {
    const both = await loadedBoth(['plan', '--help']);
    expect(both.bin.result.code).toBe(0);
    expect(both.bin.result.stdout).toContain('--detailed-exitcode');
    expect(packagesOf(both)).toEqual(['commander']);
    expect(ours(both.main.modules).filter((f) => f.endsWith('-action.js'))).toEqual([]);
  });

  it('validate loads its own action, not the HTTP client, sandbox or daemon', async () => {
    const both = await loadedBoth(['validate', EXAMPLES]);
    expect(both.bin.result.code).toBe(0);
    const files = ours(both.main.modules);
    expect(files).toContain('cli/commands/validate-action.js');
    expect(files.filter((f) => f.endsWith('-action.js'))).toEqual(['cli/commands/validate-action.js']);
    for (const heavy of ['api/', 'sandbox/', 'daemon/', 'reconcile/']) expect(files.filter((f) => f.startsWith(heavy))).toEqual([]);
    const pkgs = packagesOf(both);
    // (the manifest loader bounds its parallel file reads with a plain pool, not p-queue: issue #26)
    for (const p of ['undici', 'prom-client', 'chokidar', 'simple-git', 'p-queue', 'eventemitter3']) expect(pkgs).not.toContain(p);
    // validate logs nothing: the logger (and pino) is made on first use
    expect(pkgs).not.toContain('pino');
    // examples/ has a .govopsignore: the ignore package is required (CommonJS), never imported as ESM (Node's
    // export scan of its source costs ~30 ms)
    for (const run of [both.bin, both.main]) {
      expect(packages(run.modules)).toContain('ignore');
      expect(packages(imported(run.modules))).not.toContain('ignore');
    }
  });

  it('validate of one file loads the manifest check of its kind only, and no ignore rules', async () => {
    const one = join(dir, 'one.yaml');
    await writeFile(one, objectStore('m'));
    const both = await loadedBoth(['validate', one]);
    expect(both.bin.result.stderr).toContain('1 valid manifest');
    expect(both.bin.result.code).toBe(0);
    for (const run of [both.bin, both.main]) {
      expect(ours(run.modules).filter((f) => f.includes('generated'))).toEqual(['manifests/validators/manifest.object_store.generated.cjs']);
    }
    const files = ours(both.main.modules);
    // the command named first is the only declaration built (src/cli/commands/by-name.ts)
    expect(files.filter((f) => f.startsWith('cli/commands/'))).toEqual(['cli/commands/by-name.js', 'cli/commands/validate.js', 'cli/commands/summaries.js', 'cli/commands/validate-action.js']);
    expect(files).not.toContain('cli/program.js');
    const pkgs = packagesOf(both);
    for (const p of ['ignore', 'yaml', 'ajv-formats', 'pino']) expect(pkgs).not.toContain(p);
  });

  it('plan loads the plan action and the HTTP client (and fails cleanly without a URL)', async () => {
    const both = await loadedBoth(['plan', EXAMPLES]);
    expect(both.bin.result.code).toBe(1);
    expect(both.bin.result.stderr).toContain('no service URL given');
    expect(both.main.result.stderr).toBe(both.bin.result.stderr);
    const files = ours(both.main.modules);
    expect(files).toContain('cli/fatal.js');
    expect(files).toContain('cli/commands/plan-action.js');
    expect(files).toContain('api/client.js');
    expect(files.filter((f) => f.startsWith('sandbox/') || f.startsWith('daemon/'))).toEqual([]);
    // no request sent: undici is not loaded (util/undici.ts requires it on first use)
    expect(packagesOf(both)).not.toContain('undici');
  });

  it('a plan that logs nothing loads neither pino nor the apply modules; apply of the same loads both', async () => {
    const sandbox = await startSandbox({ port: 0, transitionMs: 1 });
    try {
      const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_LOG_LEVEL: undefined };
      for (const [entry, name] of [[undefined, 'lazy-store'], [MAIN, 'lazy-store-main']] as const) {
        const folder = join(dir, `plan-${name}`);
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, 'store.yaml'), objectStore(name));
        const state = join(dir, `plan-${name}.state.json`);
        const plan = await loaded(['plan', folder, '--state', state], env, entry);
        expect(plan.result.stdout).toContain(name);
        expect(plan.result.stderr).toBe('');
        expect(plan.result.code).toBe(0);
        expect(packages(plan.modules)).not.toContain('pino');
        // undici's Pool from its own module, not undici's index (fetch, WebSocket, cache...): util/undici.ts
        const undici = plan.modules.filter((u) => u.includes('/node_modules/undici/')).map((u) => u.replace(/.*\/node_modules\/undici\//, ''));
        expect(undici).toContain('lib/dispatcher/pool.js');
        expect(undici.filter((f) => f === 'index.js' || f.startsWith('lib/web/') || f.startsWith('lib/mock/'))).toEqual([]);
        // the same run with something to apply: the apply stage is loaded then, and the info lines need pino
        const apply = await loaded(['apply', folder, '--state', state, '--log-level', 'info'], env, entry);
        expect(apply.result.code).toBe(0);
        expect(packages(apply.modules)).toContain('pino');
        expect(apply.result.stderr).toContain('applied');
        if (entry === MAIN) {
          expect(ours(plan.modules).filter((f) => f.startsWith('apply/') || f === 'reconcile/apply-stage.js')).toEqual([]);
          expect(ours(apply.modules)).toContain('reconcile/apply-stage.js');
        }
      }
    } finally {
      await sandbox.close();
    }
  });

  it('webhooks: help loads no action; a subcommand loads its action, not the daemon, sandbox or reconcile engine', async () => {
    const help = await loadedBoth(['webhooks', 'history', '--help']);
    expect(help.bin.result.code).toBe(0);
    expect(help.bin.result.stdout).toContain('--failed');
    expect(packagesOf(help)).toEqual(['commander']);
    const both = await loadedBoth(['webhooks', 'events']);
    expect(both.bin.result.code).toBe(1);
    expect(both.bin.result.stderr).toContain('no service URL given');
    const files = ours(both.main.modules);
    expect(files.filter((f) => f.endsWith('-action.js'))).toEqual(['cli/commands/webhooks-action.js']);
    for (const heavy of ['sandbox/', 'daemon/', 'reconcile/']) expect(files.filter((f) => f.startsWith(heavy))).toEqual([]);
  });

  it('a table of printable ASCII (state list) loads neither string-width nor undici; a cell of wide characters loads string-width, aligned', async () => {
    const stateOf = async (name: string, revision: string): Promise<string> => {
      const file = join(dir, `${name}.json`);
      const resource = { kind: 'Webhook', name: 'alpha', id: '7', origin: 'created', specHash: 'x', secretFingerprints: {}, updatedAt: '2026-11-29T00:00:00.000Z', revision };
      await writeFile(file, JSON.stringify({ version: 1, fingerprintKey: 'a'.repeat(64), resources: [resource] }));
      return file;
    };
    const ascii = await loadedBoth(['state', 'list', '--state', await stateOf('state-ascii', 'abc1234')]);
    expect(ascii.bin.result.code, ascii.bin.result.stderr).toBe(0);
    expect(ascii.bin.result.stdout).toContain('Webhook/alpha  7   webhook  created  abc1234   2026-11-29T00:00:00.000Z  -');
    // in the bundle string-width is part of main.cjs: the ES modules show whether it was loaded
    expect(packages(ascii.main.modules)).not.toContain('string-width');
    // and a command that sends no request loads no HTTP client (undici brings Node's http2 and tls with it)
    expect(packagesOf(ascii)).not.toContain('undici');
    const wide = await loadedBoth(['state', 'list', '--state', await stateOf('state-wide', '日本語-🚀')]);
    expect(wide.bin.result.code, wide.bin.result.stderr).toBe(0);
    expect(packages(wide.main.modules)).toContain('string-width');
    // 9 columns: REVISION's header (8) padded to the cell's width, the next column after two spaces
    expect(wide.bin.result.stdout.split('\n')[0]).toContain('REVISION   LAST APPLIED');
    expect(wide.bin.result.stdout.split('\n')[1]).toContain('日本語-🚀  2026-11-29');
  });

  it('healthcheck loads its own action and no HTTP client, sandbox, daemon or logger', async () => {
    const both = await loadedBoth(['healthcheck', '--listen', '127.0.0.1:1', '--timeout', '1s']);
    expect(both.bin.result.code).toBe(1);
    expect(both.bin.result.stdout).toContain('unhealthy: http://127.0.0.1:1/healthz');
    expect(packagesOf(both)).toEqual(['commander']);
    const files = ours(both.main.modules);
    expect(files.filter((f) => f.endsWith('-action.js'))).toEqual(['cli/commands/healthcheck-action.js']);
    for (const heavy of ['log.js', 'api/', 'sandbox/', 'daemon/', 'reconcile/', 'manifests/']) {
      expect(files.filter((f) => f.startsWith(heavy))).toEqual([]);
    }
  });
});
