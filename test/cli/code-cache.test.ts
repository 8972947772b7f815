/**
 * The compiled code the `govops` command runs from (src/cli/code-cache.ts, recorded by scripts/build-code-cache.mjs):
 * the build's record is accepted by this Node, a file whose text changed since it was recorded runs as it is now (V8
 * alone would run the old code: it compares the text's length only), a damaged record or one of another V8 is
 * compiled as usual, and the command really runs main.cjs through it.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainCommonJs, sha1 } from '../../src/cli/code-cache.js';
import { COMMAND_V8_FLAGS } from '../../src/cli/v8-flags.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CODE_CACHE = pathToFileURL(join(ROOT, 'dist/cli/code-cache.js')).href;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'govops-code-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Run an ES module script in a new node process (no flags, as the command runs); its stdout, trimmed. */
function node(script: string): string {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`node exited ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * A package root of its own holding dist/m.cjs with `text`, and the code of `recorded` (a text of the same length)
 * recorded for it under the hash of `indexed` (default: the recorded text's own).
 */
async function rootWith(name: string, text: string, recorded: string, options: { indexed?: string; v8?: string; data?: Buffer } = {}): Promise<string> {
  const root = join(dir, name);
  await mkdir(join(root, 'dist/code-cache'), { recursive: true });
  await writeFile(join(root, 'dist/m.cjs'), recorded);
  // record: compile and run the recorded text as the command would, then ask V8 for its code (a process of its own)
  node(`
    import { createRequire } from 'node:module';
    import { writeFileSync } from 'node:fs';
    import { runCompiled } from ${JSON.stringify(CODE_CACHE)};
    const Module = createRequire(import.meta.url)('node:module');
    const file = ${JSON.stringify(join(root, 'dist/m.cjs'))};
    const m = new Module(file);
    const { script } = runCompiled(m, ${JSON.stringify(recorded)}, file);
    m.exports();
    writeFileSync(${JSON.stringify(join(root, 'dist/code-cache/m.bin'))}, script.createCachedData());
  `);
  if (options.data) await writeFile(join(root, 'dist/code-cache/m.bin'), options.data);
  const index = {
    v8: options.v8 ?? process.versions.v8,
    arch: process.arch,
    files: { 'dist/m.cjs': { sha1: sha1(options.indexed ?? recorded), cache: 'm.bin' } },
  };
  await writeFile(join(root, 'dist/code-cache/index.json'), JSON.stringify(index));
  await writeFile(join(root, 'dist/m.cjs'), text);
  return root;
}

/** What dist/m.cjs under `root` returns when required with the cache in use, and whether it was in use. */
const requiredWithCache = (root: string): string =>
  node(`
    import { createRequire } from 'node:module';
    import { useCodeCache } from ${JSON.stringify(CODE_CACHE)};
    const used = useCodeCache(${JSON.stringify(root)});
    console.log(used, createRequire(import.meta.url)(${JSON.stringify(join(root, 'dist/m.cjs'))})());
  `);

const ONE = 'module.exports = function f() { return 1; };';
const TWO = 'module.exports = function f() { return 2; };';

describe('the compiled code the command runs from', () => {
  it('the build recorded it for the command line (main.cjs) and the packages, and this Node accepts all of it', async () => {
    const index = JSON.parse(await readFile(join(ROOT, 'dist/code-cache/index.json'), 'utf8')) as { v8: string; flags: string; files: Record<string, unknown> };
    expect(index.v8).toBe(process.versions.v8);
    expect(index.flags).toBe(COMMAND_V8_FLAGS);
    expect(Object.keys(index.files)).toContain('dist/cli/main.cjs');
    expect(Object.keys(index.files).some((f) => f.startsWith('node_modules/undici/'))).toBe(true);
    // each record compiled in a fresh process under the command's flags (the daemon's V8 flags once made records
    // every other process refused)
    const rejected = node(`
      import { readFileSync } from 'node:fs';
      import { createRequire } from 'node:module';
      import { setFlagsFromString } from 'node:v8';
      import { Script } from 'node:vm';
      const Module = createRequire(import.meta.url)('node:module');
      const root = ${JSON.stringify(ROOT)};
      const index = JSON.parse(readFileSync(root + 'dist/code-cache/index.json', 'utf8'));
      setFlagsFromString(index.flags);
      const out = [];
      for (const [rel, { cache }] of Object.entries(index.files)) {
        const s = new Script(Module.wrap(readFileSync(root + rel, 'utf8')), { filename: root + rel, cachedData: readFileSync(root + 'dist/code-cache/' + cache) });
        if (s.cachedDataRejected) out.push(rel);
      }
      console.log(JSON.stringify(out));
    `);
    expect(JSON.parse(rejected)).toEqual([]);
  });

  it('a file whose text changed since it was recorded runs as it is now; V8 alone would run the old code', async () => {
    const same = await rootWith('same', ONE, ONE);
    expect(requiredWithCache(same)).toBe('true 1');
    const changed = await rootWith('changed', TWO, ONE);
    expect(requiredWithCache(changed)).toBe('true 2');
    // why the hash: the same record given to V8 for the changed text is accepted, and runs the recorded code
    const v8Alone = node(`
      import { readFileSync } from 'node:fs';
      import { createRequire } from 'node:module';
      import { runCompiled } from ${JSON.stringify(CODE_CACHE)};
      const Module = createRequire(import.meta.url)('node:module');
      const file = ${JSON.stringify(join(changed, 'dist/m.cjs'))};
      const m = new Module(file);
      runCompiled(m, ${JSON.stringify(TWO)}, file, readFileSync(${JSON.stringify(join(changed, 'dist/code-cache/m.bin'))}));
      console.log(m.exports());
    `);
    expect(v8Alone).toBe('1');
  });

  it('a damaged record is compiled as usual; a record of another V8 is not used at all', async () => {
    const damaged = await rootWith('damaged', ONE, ONE, { data: Buffer.from('not compiled code at all, just bytes') });
    expect(requiredWithCache(damaged)).toBe('true 1');
    const other = await rootWith('other-v8', TWO, ONE, { indexed: TWO, v8: '1.2.3' });
    expect(requiredWithCache(other)).toBe('false 2');
  });

  it('leaves to Node what it does not compile as plain CommonJS (Node 22.12+ passes the format)', () => {
    expect(plainCommonJs([])).toBe(true);
    expect(plainCommonJs(['commonjs'])).toBe(true);
    expect(plainCommonJs(['module'])).toBe(false);
    expect(plainCommonJs(['commonjs-typescript'])).toBe(false);
  });

  it('the govops command runs main.cjs from it, V8 accepts every record it reads, and its modules read their files from where tsc put them', async () => {
    const hook = join(dir, 'hook.mjs');
    // counts the records V8 accepted and refused in the command's own process (code-cache.ts looks vm.Script up on
    // each compile): the command must run under the flags the records were made under (v8-flags.ts)
    await writeFile(
      hook,
      `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const Module = require('node:module');
const vm = require('node:vm');
let accepted = 0, refused = 0;
vm.Script = class extends vm.Script {
  constructor(code, options) {
    super(code, options);
    if (options?.cachedData) this.cachedDataRejected ? refused++ : accepted++;
  }
};
process.on('exit', () => process.stderr.write('compile=' + Module.prototype._compile.name + ' main=' + Object.keys(Module._cache).some((f) => f.endsWith('/dist/cli/main.cjs')) + ' refused=' + refused + ' accepted=' + (accepted > 10) + '\\n'));
`,
    );
    const r = await runGovops(['validate', join(ROOT, 'examples')], { cwd: dir, env: { NODE_OPTIONS: `--import ${pathToFileURL(hook).href}` } });
    expect(r.code).toBe(0);
    // the schemas (../../schemas/ from dist/manifests/) and the generated checks (./validators/ beside them) were found
    expect(r.stderr).toContain('18 valid manifests');
    expect(r.stderr).toContain('compile=compileCached main=true refused=0 accepted=true');
  });

  it("Node's own modules a command loads are loaded before it sets its flags (after, V8 would compile them from their source)", async () => {
    const hook = join(dir, 'flags-hook.mjs');
    // which of Node's modules were loaded when the flags changed, and which only after
    await writeFile(
      hook,
      `import { createRequire } from 'node:module';
const v8 = createRequire(import.meta.url)('node:v8');
const set = v8.setFlagsFromString;
const node = () => process.moduleLoadList.filter((m) => m.startsWith('NativeModule ') && !m.includes('internal/')).map((m) => m.slice(13));
let before;
v8.setFlagsFromString = function (flags) { before ??= node(); return set.call(this, flags); };
process.on('exit', () => process.stderr.write('before=' + JSON.stringify(before) + ' after=' + JSON.stringify(node().filter((m) => !before.includes(m))) + '\\n'));
`,
    );
    const seen = (stderr: string): { before: string[]; after: string[] } => {
      const m = /before=(.*) after=(.*)/.exec(stderr);
      if (!m) throw new Error(`no report in: ${stderr}`);
      return { before: JSON.parse(m[1]!) as string[], after: JSON.parse(m[2]!) as string[] };
    };
    const env = { NODE_OPTIONS: `--import ${pathToFileURL(hook).href}` };
    const sandbox = await startSandbox({ port: 0 });
    try {
      const sending = await runGovops(['webhooks', 'list', '-o', 'json'], { cwd: dir, env: { ...env, GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken } });
      expect(sending.code, sending.stderr).toBe(0);
      const { before, after } = seen(sending.stderr);
      for (const m of ['crypto', 'vm', 'fs/promises', 'tls', 'http2', 'assert']) expect(before).toContain(m);
      for (const m of ['crypto', 'vm', 'fs/promises', 'tls', 'http2', 'assert', 'net', 'os', 'timers/promises']) expect(after).not.toContain(m);
    } finally {
      await sandbox.close();
    }
    // a command that sends nothing does not load the HTTP client's modules at all
    const validate = await runGovops(['validate', join(ROOT, 'examples')], { cwd: dir, env });
    expect(validate.code, validate.stderr).toBe(0);
    const v = seen(validate.stderr);
    expect(v.before).toContain('crypto');
    expect([...v.before, ...v.after]).not.toContain('http2');
    // one that reads the state and sends nothing: the lock's modules before the change, no HTTP client's
    const stateFile = join(dir, 'flags-state.json');
    await writeFile(stateFile, JSON.stringify({ version: 1, fingerprintKey: 'a'.repeat(64), resources: [] }));
    const list = await runGovops(['state', 'list', '--state', stateFile], { cwd: dir, env });
    expect(list.code, list.stderr).toBe(0);
    const l = seen(list.stderr);
    expect(l.before).toEqual(expect.arrayContaining(['os', 'timers/promises']));
    expect([...l.before, ...l.after]).not.toContain('http2');
  });
});
