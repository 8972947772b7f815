/**
 * loadManifests: find, read, parse and validate every manifest under some paths, in one call.
 * Returns the valid manifests and every diagnostic; any `error` diagnostic means the set must
 * not be applied. Used by `govops validate`, plan/apply, and the daemon.
 */
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { ErrorCode } from '../errors.js';
import { findManifestFiles } from './discover.js';
import { isGovopsStateText } from '../util/own-files.js';
import { checkDataSources } from './data-sources.js';
import { checkDuplicates } from './duplicates.js';
import { MAX_FILE_BYTES } from './hostile.js';
import { parseManifestText } from './parse.js';
import { parseStream, STDIN_PATH } from './stream.js';
import { DEFAULT_SECRET_SCOPE, scopeDiagnostics, scopeMemo, type SecretScope } from './secret-scope.js';
import type { Diagnostic, LoadedManifest, ManifestSet } from './types.js';
import { mapLimit } from '../util/map-limit.js';
import { pushAll } from '../util/multimap.js';
import { readFileUpTo } from '../util/read-up-to.js';

export interface LoadOptions {
  /** Paths are resolved against it and files are named relative to it. Default: process.cwd(). */
  cwd?: string;
  /** Every warning is an error (`validate --strict`, as linters do): plain-literal credentials, unknown fields... */
  strict?: boolean;
  /**
   * The folder nothing may leave: no manifest behind a symlink out of it, and the default secrets
   * root (the daemon: the repository; preview: the Git work tree). Default: each path given.
   */
  root?: string;
  /** Which secrets manifests may reference (default: GOVOPS_SECRET_* variables, files inside the root). */
  secretScope?: SecretScope;
  /** Where the root's files really are when the manifests are a copy (the directory source's snapshot). */
  secretsOrigin?: string;
  /**
   * The stream the path `-` stands for (standard input, or a render command's output): its text, read once,
   * and how diagnostics name it (default `-`). Without it, `-` is an error.
   */
  stream?: ManifestStream;
  /** govops' state files (`--state`): never read as manifests, nor their journal, lock or temporary files. */
  stateFiles?: readonly string[];
}

export interface ManifestStream {
  read(): Promise<string>;
  label?: string;
}

export interface LoadResult extends ManifestSet {
  /** Files read (as named in diagnostics). */
  files: string[];
  /** Manifests with no error of their own (`manifests` also holds those with an error found across documents). */
  valid: number;
}

/** How a file is named in diagnostics: relative to cwd when inside it, else absolute. */
export function displayName(abs: string, cwd: string): string {
  const rel = relative(cwd, abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Read a file, refusing (without reading it all) anything over the size limit. */
async function readText(abs: string): Promise<{ text?: string; message?: string; io?: boolean }> {
  try {
    const buf = await readFileUpTo(abs, MAX_FILE_BYTES);
    if (buf.length > MAX_FILE_BYTES) return { message: `file is larger than ${MAX_FILE_BYTES} bytes (1 MiB); manifests are small text files` };
    if (buf.includes(0)) return { message: 'binary content (NUL byte): not a YAML text file' };
    try {
      return { text: decoder.decode(buf) };
    } catch {
      return { message: 'not UTF-8 text' };
    }
  } catch (err) {
    return { message: `cannot read file: ${(err as Error).message}`, io: true };
  }
}

/** The documents of the stream `-` stands for, parsed, with any read failure as a diagnostic. */
async function loadStream(options: LoadOptions, cwd: string): Promise<{ label: string; manifests: LoadedManifest[]; diagnostics: Diagnostic[] }> {
  const label = options.stream?.label ?? STDIN_PATH;
  const fail = (message: string, io = false): { label: string; manifests: LoadedManifest[]; diagnostics: Diagnostic[] } => ({
    label,
    manifests: [],
    diagnostics: [{ file: label, line: 1, column: 1, severity: 'error', message, ...(io ? { code: ErrorCode.sourceIo } : {}) }],
  });
  if (!options.stream) return fail('`-` (a manifest stream on standard input) is not accepted here');
  let text: string;
  try {
    text = await options.stream.read();
  } catch (err) {
    return fail(`cannot read the stream: ${(err as Error).message}`, true);
  }
  if (text.includes('\u0000')) return fail('binary content (NUL byte): not a YAML text stream');
  const res = parseStream(text, label, options.root ?? cwd, { strict: options.strict });
  if (res.manifests.length === 0 && res.diagnostics.length === 0) {
    res.diagnostics.push({ file: label, line: 1, column: 1, severity: 'warning', message: 'the stream holds no manifest' });
  }
  return { label, ...res };
}

export async function loadManifests(paths: readonly string[], options: LoadOptions = {}): Promise<LoadResult> {
  const cwd = options.cwd ?? process.cwd();
  // `-` is the stream, alone or beside files and folders
  const filePaths = paths.filter((p) => p !== STDIN_PATH);
  const withStream = filePaths.length < paths.length;
  const read = filePaths.length || !withStream ? await readFiles(filePaths, options, cwd) : { manifests: [], diagnostics: [], files: [] };
  if (withStream) {
    const stream = await loadStream(options, cwd);
    const root = options.root ?? cwd;
    const memo = scopeMemo();
    for (const m of stream.manifests) {
      m.root = root;
      pushAll(read.diagnostics, scopeDiagnostics(m, options.secretScope ?? DEFAULT_SECRET_SCOPE, options.secretsOrigin, memo));
    }
    pushAll(read.manifests, stream.manifests);
    pushAll(read.diagnostics, stream.diagnostics);
    read.files.push(stream.label);
  }
  const dup = checkDuplicates(read.manifests);
  const own = [...read.diagnostics, ...checkDataSources(dup.kept)];
  const diagnostics = [...own, ...dup.diagnostics];
  if (options.strict) for (const d of diagnostics) d.severity = 'error';
  return { manifests: dup.kept, diagnostics: sortDiagnostics(diagnostics), files: read.files, valid: validCount(dup.kept, own) };
}

/**
 * How many manifests have no error of their own: an error found after the document parsed (a secret reference
 * out of scope, a data source without its integration) names its file, kind and name. The duplicate-name errors
 * are the dropped duplicates', not the kept manifest's.
 */
function validCount(kept: readonly LoadedManifest[], own: readonly Diagnostic[]): number {
  const bad = new Set(own.filter((d) => d.severity === 'error' && d.name !== undefined).map((d) => `${d.file}\0${d.kind}\0${d.name}`));
  return kept.filter((m) => !bad.has(`${m.source.file}\0${m.manifest.kind}\0${m.manifest.metadata.name}`)).length;
}

/** Find, read and parse the files under some paths (each document checked on its own, not yet against the others). */
async function readFiles(paths: readonly string[], options: LoadOptions, cwd: string): Promise<{ manifests: LoadedManifest[]; diagnostics: Diagnostic[]; files: string[] }> {
  const found = await findManifestFiles(paths, cwd, {
    ...(options.root !== undefined ? { root: options.root } : {}),
    ...(options.stateFiles ? { stateFiles: options.stateFiles } : {}),
  });
  const scope = options.secretScope ?? DEFAULT_SECRET_SCOPE;
  const diagnostics: Diagnostic[] = found.problems.map((p) => ({
    file: displayName(p.path, cwd),
    line: 1,
    column: 1,
    severity: 'error',
    message: p.message,
    ...(p.rule ? { rule: p.rule } : {}),
  }));
  const all: LoadedManifest[] = [];
  const files: string[] = [];
  // At most 32 files open at a time (no EMFILE on large trees); results in the order of the files.
  const texts = await mapLimit(found.files, 32, readText);
  const memo = scopeMemo();
  found.files.forEach((abs, i) => {
    const file = displayName(abs, cwd);
    const { text, message, io } = texts[i]!;
    // A state, journal or lock govops wrote (JSON is YAML), whatever it is called: never a manifest.
    if (text !== undefined && isGovopsStateText(text)) return;
    files.push(file);
    if (text === undefined) {
      const d: Diagnostic = { file, line: 1, column: 1, severity: 'error', message: message ?? 'cannot read file' };
      if (io) d.code = ErrorCode.sourceIo;
      diagnostics.push(d);
      return;
    }
    const res = parseManifestText(text, file, dirname(abs), { strict: options.strict });
    const root = found.rootOf.get(abs);
    for (const m of res.manifests) {
      if (root !== undefined) m.root = root;
      pushAll(diagnostics, scopeDiagnostics(m, scope, options.secretsOrigin, memo));
    }
    pushAll(all, res.manifests);
    pushAll(diagnostics, res.diagnostics);
  });
  if (found.files.length === 0 && found.problems.length === 0) {
    diagnostics.push({
      file: paths.length ? paths.map((p) => displayName(resolve(cwd, p), cwd) || '.').join(', ') : '.',
      line: 1,
      column: 1,
      severity: 'warning',
      message: 'no manifest files (*.yaml, *.yml) found',
    });
  }
  return { manifests: all, diagnostics, files };
}

const STREAM_DOC = /^(.*):doc (\d+)$/;

/** Files in name order, except the documents of one stream: in stream order (doc 2 before doc 10). */
function compareFiles(a: string, b: string): number {
  const x = STREAM_DOC.exec(a);
  const y = x ? STREAM_DOC.exec(b) : null;
  if (x && y && x[1] === y[1]) return Number(x[2]) - Number(y[2]);
  return a < b ? -1 : 1;
}

export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) =>
    a.file !== b.file ? compareFiles(a.file, b.file) : a.line !== b.line ? a.line - b.line : a.column - b.column,
  );
}
