/**
 * Compiled code for govops' CommonJS files (the command line as one file, dist/cli/main.cjs, the generated manifest
 * checks, the packages), recorded by the build (scripts/build-code-cache.mjs) and only read here: V8 then skips
 * parsing and compiling what the recording runs compiled. Node 20 has no such cache of its own (Node 22's
 * `module.enableCompileCache`), and compiling again was a third to a half of a short command's CPU
 * (docs/decisions.md "The command line runs from compiled code").
 *
 * dist/code-cache/index.json names each recorded file (its path under the package) with the SHA-1 of its text and its
 * cache file. A file is run from its cache only when its text has that hash (V8's own check compares the text's
 * length only) and the index was recorded by this V8 on this architecture; V8 checks the rest (its version and flags)
 * and compiles the text itself when it rejects the cache. Any other file, and anything unreadable, is compiled as
 * Node always does. Nothing here writes.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import type { Script } from 'node:vm';

export const CODE_CACHE_DIR = 'dist/code-cache';
export const CODE_CACHE_INDEX = 'index.json';

export interface CodeCacheIndex {
  v8: string;
  arch: string;
  /** The V8 flags the records were made under (v8-flags.ts): a process compiling them must have set the same. */
  flags?: string;
  /** By path under the package root (`/`-separated). */
  files: Record<string, { sha1: string; cache: string }>;
}

/** What this module needs of Node's CommonJS `Module` (internal members, stable since Node 0.x; v8-compile-cache uses them). */
export interface CjsModule {
  exports: unknown;
  filename: string;
  require(id: string): unknown;
}
interface CjsModuleClass {
  prototype: { _compile(this: CjsModule, content: string, filename: string, ...rest: unknown[]): unknown };
  wrap(content: string): string;
  _resolveFilename(request: string, parent: CjsModule, isMain: boolean, options?: { paths?: string[] }): string;
  _resolveLookupPaths(request: string, parent: CjsModule): string[] | null;
  _extensions: unknown;
  _cache: unknown;
}

const nodeRequire = createRequire(import.meta.url);
const Module = nodeRequire('node:module') as CjsModuleClass;

/** Marks the compile step of a recording run (scripts/code-cache-record.mjs): the reader then stays out of its way. */
export const RECORDING = Symbol.for('govops.codeCache.recording');

// node:crypto and node:vm are required on first use: `govops --help` (this module is bundled into the command) loads neither.
export const sha1 = (text: string): string => (nodeRequire('node:crypto') as typeof import('node:crypto')).createHash('sha1').update(text).digest('hex');

export const pathUnder = (root: string, filename: string): string => relative(root, filename).split(sep).join('/');

/**
 * Compile `content` as the CommonJS module `module` (with `cachedData` when given) and run it, as Node's own
 * `Module.prototype._compile` does. Returns the script (a recording run asks it for its compiled code at exit) and the
 * wrapper's result.
 */
export function runCompiled(module: CjsModule, content: string, filename: string, cachedData?: Buffer): { script: Script; result: unknown } {
  const { Script, constants } = nodeRequire('node:vm') as typeof import('node:vm');
  const script = new Script(Module.wrap(content), {
    filename,
    cachedData,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const fn = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  const require = Object.assign((id: string) => module.require(id), {
    resolve: Object.assign((request: string, options?: { paths?: string[] }) => Module._resolveFilename(request, module, false, options), {
      paths: (request: string) => Module._resolveLookupPaths(request, module),
    }),
    main: nodeRequire.main,
    extensions: Module._extensions,
    cache: Module._cache,
  });
  const result = fn.call(module.exports, module.exports, require, module, filename, join(filename, '..'));
  return { script, result };
}

/** The index recorded under `root`, when it was recorded by this V8 on this architecture. */
export function readCodeCacheIndex(root: string): CodeCacheIndex | undefined {
  try {
    const index = JSON.parse(readFileSync(join(root, CODE_CACHE_DIR, CODE_CACHE_INDEX), 'utf8')) as CodeCacheIndex;
    return index.v8 === process.versions.v8 && index.arch === process.arch && typeof index.files === 'object' ? index : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether Node asks for a plain CommonJS compile: Node 22.12 and later pass a third argument, the format, which is
 * also `module` for an ES module loaded by require() or a TypeScript format: those are left to Node.
 */
export const plainCommonJs = (rest: unknown[]): boolean => rest[0] === undefined || rest[0] === 'commonjs';

/** The recorded code of `filename` when its text is the one recorded. */
export function cachedCode(root: string, index: CodeCacheIndex, filename: string, content: string): Buffer | undefined {
  const rel = pathUnder(root, filename);
  const entry = Object.hasOwn(index.files, rel) ? index.files[rel] : undefined;
  if (!entry || content.startsWith('#!') || sha1(content) !== entry.sha1) return undefined;
  try {
    return readFileSync(join(root, CODE_CACHE_DIR, entry.cache));
  } catch {
    return undefined;
  }
}

/**
 * From now on, CommonJS files recorded under `root` run from their recorded code. Returns whether the cache is in use
 * (false: no index for this V8, or a recording run).
 */
export function useCodeCache(root: string): boolean {
  const proto = Module.prototype;
  const compile = proto._compile;
  if ((compile as unknown as Record<symbol, unknown>)[RECORDING]) return false;
  const index = readCodeCacheIndex(root);
  if (!index) return false;
  proto._compile = function compileCached(this: CjsModule, content: string, filename: string, ...rest: unknown[]): unknown {
    const code = plainCommonJs(rest) ? cachedCode(root, index, filename, content) : undefined;
    if (!code) return compile.call(this, content, filename, ...rest);
    return runCompiled(this, content, filename, code).result;
  };
  return true;
}
