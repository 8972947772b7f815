/**
 * Find manifest files: `*.yaml` / `*.yml` under the given paths, honouring `.govopsignore`.
 * Repository content stays in the repository: a symbolic link whose target leaves the scanned root is
 * refused (an error naming the link; the target is never read), and a Git submodule (listed in
 * `.gitmodules`, or a folder holding its own `.git`) is reported instead of being silently skipped or read.
 */
import { lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { MAX_FILE_BYTES } from './hostile.js';
import { readFileUpTo } from '../util/read-up-to.js';
import { IGNORE_FILE, isIgnored, parseIgnore, type IgnoreRules } from './ignore.js';
import { isInside } from '../util/inside.js';
import { isSkippedName } from '../util/skipped-names.js';
import { WORKDIR_MARKER, isStateFamily } from '../util/own-files.js';

export interface DiscoveryProblem {
  /** Absolute path of the file or folder. */
  path: string;
  message: string;
  /** The security rule broken, when it is one (`symlink`, `submodule`). */
  rule?: string;
}

export interface Discovery {
  /** Absolute paths, in a stable order, each once. */
  files: string[];
  /** Paths that do not exist or cannot be read (absolute), with the reason. */
  problems: DiscoveryProblem[];
  /** The scanned root each file was found under (the default secrets root of its manifests). */
  rootOf: Map<string, string>;
}

export interface DiscoveryOptions {
  /**
   * The folder nothing may leave (the daemon: the repository; preview: the Git work tree). Default:
   * each folder given is its own root, and a file named explicitly is read as the operator named it.
   */
  root?: string;
  /**
   * govops' state files (`--state`): each, with its journal, lock and temporary files, is never read as a manifest.
   * A folder holding the work-folder marker (`.govops-workdir`) is skipped whatever the options.
   */
  stateFiles?: readonly string[];
}

interface Scope {
  dir: string;
  rules: IgnoreRules;
}

interface Walk {
  out: Discovery;
  seen: Set<string>;
  /** The root recorded per file (the default secrets root). */
  root: string;
  /** Nothing may leave it: its real path, and how to name it. */
  realRoot: string;
  label: string;
  /** Absolute paths of submodules declared by the `.gitmodules` files seen so far. */
  submodules: Set<string>;
  /** The state files (absolute): never read. */
  stateFiles: readonly string[];
  /** Patterns of the `.govopsignore` files read so far (bounded together: MAX_IGNORE_PATTERNS). */
  ignorePatterns: number;
}

export const MANIFEST_EXT = /\.ya?ml$/i;
/**
 * Bounds on the work a `.govopsignore` can ask for (whoever commits writes it, a pull request too). The `ignore`
 * package compiles a `**` between two folders into a group that backtracks over the path: each more such `**` in a
 * pattern multiplies the work by the path's depth (twelve of them against a 40-folder path ran for hours, blocking the
 * daemon's event loop), and every pattern is matched against every path and each of its parents. Below: the
 * patterns of all the `.govopsignore` files of one walk together, the `**` between folders of one pattern, the depth.
 */
export const MAX_IGNORE_PATTERNS = 1000;
export const MAX_INNER_GLOBSTARS = 1;
export const MAX_FOLDER_DEPTH = 64;

/**
 * Why a `.govopsignore` text asks for too much work (it is then not read), or undefined; `before` is how many patterns
 * the ignore files already read in the same walk hold (each file's patterns are matched below it, in every folder).
 */
export function ignoreTextProblem(text: string, before = 0): { problem?: string; patterns: number } {
  let patterns = 0;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trimEnd();
    if (line === '' || line.startsWith('#')) continue;
    if (before + ++patterns > MAX_IGNORE_PATTERNS) {
      const together = before > 0 ? ' with the other .govopsignore files read' : '';
      return { patterns, problem: `more than ${MAX_IGNORE_PATTERNS} patterns${together}: not read, and nothing under its folder is taken as manifests until there are fewer` };
    }
    const segments = line.replace(/^!/, '').replace(/^\//, '').replace(/\/$/, '').split('/');
    let inner = 0;
    for (let k = 1; k < segments.length - 1; k++) if (segments[k] === '**') inner++;
    if (inner > MAX_INNER_GLOBSTARS) {
      const shown = line.length > 60 ? `${line.slice(0, 60)}…` : line;
      return { patterns, problem: `line ${i + 1}: more than one \`**\` between folders (${shown}): not read, and nothing under its folder is taken as manifests until the pattern has at most one (matching it costs more with each one, on every path)` };
    }
  }
  return { patterns };
}
export const GITMODULES_FILE = '.gitmodules';

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

/** Submodule paths declared in a `.gitmodules` text (`path = sub/dir`), relative to its folder. */
export function parseGitmodules(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    // `path = value`: the value trimmed, on one line. Not `/^\s*path\s*=\s*(.+?)\s*$/`, whose lazy value and the
    // spaces after it backtrack quadratically over a long run of spaces (a .gitmodules a pull request adds is read
    // whole: 100,000 spaces took 3.6 s).
    const key = /^\s*path\s*=/.exec(line);
    if (!key) continue;
    const value = line.slice(key[0].length).trim();
    if (value === '' || /[\r\u2028\u2029]/.test(value)) continue;
    out.push(value.replace(/^"(.*)"$/, '$1'));
  }
  return out;
}

/**
 * A small control file of the tree (`.gitmodules`, `.govopsignore`), whoever wrote it: its text, or undefined when it
 * is not a regular file (a symlink is not followed). Larger than a manifest may be (1 MiB): a problem, not read
 * (a pull request could otherwise have the whole of any size held in memory).
 */
async function readControlFile(file: string, problems: DiscoveryProblem[]): Promise<string | undefined> {
  const st = await lstat(file).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  const buf = await readFileUpTo(file, MAX_FILE_BYTES).catch((err: Error) => {
    problems.push({ path: file, message: `cannot read: ${err.message}` });
    return undefined;
  });
  if (buf && buf.length > MAX_FILE_BYTES) {
    problems.push({ path: file, message: `larger than ${MAX_FILE_BYTES} bytes (1 MiB): not read, and nothing under its folder is taken as manifests until it is smaller` });
    return undefined;
  }
  return buf?.toString('utf8');
}

async function readGitmodules(dir: string, into: Set<string>, problems: DiscoveryProblem[]): Promise<void> {
  const text = await readControlFile(join(dir, GITMODULES_FILE), problems);
  for (const p of parseGitmodules(text ?? '')) into.add(resolve(dir, p));
}

function submoduleProblem(path: string): DiscoveryProblem {
  return {
    path,
    rule: 'submodule',
    message:
      'a Git submodule: govops does not read submodules (their files are not part of this revision); ' +
      'move its manifests into the repository, or list the folder in .govopsignore to skip it',
  };
}

function ownProblem(path: string, what: string): DiscoveryProblem {
  return { path, rule: 'own-files', message: `govops' own ${what}: not read as manifests (name the manifests' folder instead)` };
}

const isOwnWorkdir = (entries: readonly Dirent[]): boolean => entries.some((e) => e.name === WORKDIR_MARKER && e.isFile());

function escapeProblem(path: string, root: string): DiscoveryProblem {
  return {
    path,
    rule: 'symlink',
    message: `a symbolic link leading outside ${root}: refused, its target is not read (put the file itself in the repository, or list the link in .govopsignore)`,
  };
}

/**
 * What a folder entry is; a symbolic link is followed by metadata only (its target is not read). Undefined: a
 * dangling link, reported when it would be a manifest.
 */
async function entryKind(
  e: Dirent,
  full: string,
  dir: string,
  here: readonly Scope[],
  w: Walk,
): Promise<{ isDir: boolean; isFile: boolean; escapes: boolean } | undefined> {
  if (!e.isSymbolicLink()) return { isDir: e.isDirectory(), isFile: e.isFile(), escapes: false };
  const target = await realpath(full).catch(() => undefined);
  if (target === undefined) {
    // Dangling: where it would lead, from the link text alone.
    const text = await readlink(full).catch(() => undefined);
    if (!MANIFEST_EXT.test(e.name)) return undefined;
    if (here.some((s) => isIgnored(s.rules, toPosix(relative(s.dir, full)), false))) return undefined;
    const lexical = text === undefined ? full : resolve(dir, text);
    w.out.problems.push(
      isInside(w.realRoot, lexical) || isInside(w.label, lexical)
        ? { path: full, message: 'a symbolic link to a file that does not exist', rule: 'symlink' }
        : escapeProblem(full, w.label),
    );
    return undefined;
  }
  const s = await stat(full).catch(() => undefined); // metadata only: the target is not read
  return { isDir: Boolean(s?.isDirectory()), isFile: Boolean(s?.isFile()), escapes: !isInside(w.realRoot, target) };
}

async function walk(dir: string, scopes: Scope[], w: Walk, top: boolean, depth = 0): Promise<void> {
  if (depth > MAX_FOLDER_DEPTH) {
    w.out.problems.push({ path: dir, message: `nested more than ${MAX_FOLDER_DEPTH} folders deep below the path given: not read (manifests never need such depth)` });
    return;
  }
  const real = await realpath(dir).catch(() => dir);
  if (w.seen.has(real)) return; // symlink loops
  w.seen.add(real);
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    w.out.problems.push({ path: dir, message: `cannot read folder: ${(err as Error).message}` });
    return;
  }
  if (isOwnWorkdir(entries)) {
    // govops' work folder (a daemon's snapshots, revision worktrees): never manifests
    if (top) w.out.problems.push(ownProblem(dir, 'work folder'));
    return;
  }
  if (!top && entries.some((e) => e.name === '.git')) {
    w.out.problems.push(submoduleProblem(dir));
    return;
  }
  let here = scopes;
  if (entries.some((e) => e.name === IGNORE_FILE && e.isFile())) {
    let text = await readControlFile(join(dir, IGNORE_FILE), w.out.problems);
    const work = text === undefined ? undefined : ignoreTextProblem(text, w.ignorePatterns);
    if (work?.problem) {
      w.out.problems.push({ path: join(dir, IGNORE_FILE), message: work.problem });
      text = undefined;
    } else if (work) w.ignorePatterns += work.patterns;
    here = [...scopes, { dir, rules: parseIgnore(text ?? '') }];
  }
  if (entries.some((e) => e.name === GITMODULES_FILE)) await readGitmodules(dir, w.submodules, w.out.problems);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (isSkippedName(e.name)) continue;
    const full = join(dir, e.name);
    const what = await entryKind(e, full, dir, here, w);
    if (!what) continue;
    const { isDir, isFile, escapes } = what;
    if (!isDir && !(isFile && MANIFEST_EXT.test(e.name))) continue;
    if (here.some((s) => isIgnored(s.rules, toPosix(relative(s.dir, full)), isDir))) continue;
    if (escapes) {
      w.out.problems.push(escapeProblem(full, w.label));
      continue;
    }
    if (isDir && w.submodules.has(full)) {
      w.out.problems.push(submoduleProblem(full));
      continue;
    }
    if (isDir) await walk(full, here, w, false, depth + 1);
    else if (w.stateFiles.some((f) => isStateFamily(full, f) || isStateFamily(join(real, e.name), f))) continue;
    else {
      w.out.files.push(full);
      if (!w.out.rootOf.has(full)) w.out.rootOf.set(full, w.root);
    }
  }
}

/** Each state file as given and under its folder's real path (folders are walked both ways). */
async function stateSpellings(cwd: string, files: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  for (const f of files) {
    const abs = resolve(cwd, f);
    out.add(abs);
    out.add(join(await realpath(dirname(abs)).catch(() => dirname(abs)), basename(abs)));
  }
  return [...out];
}

/**
 * Walk the paths (relative to cwd). A path naming a file is taken as it is, whatever its name.
 * Nothing leaves the containment root: `options.root` when given (the daemon: the repository), else
 * the current folder for a path inside it (a checkout in CI: a folder named on the command line cannot
 * be a link out of it), else the path itself.
 */
export async function findManifestFiles(paths: readonly string[], cwd: string, options: DiscoveryOptions = {}): Promise<Discovery> {
  const out: Discovery = { files: [], problems: [], rootOf: new Map() };
  const seen = new Set<string>();
  const fixedRoot = options.root ? resolve(cwd, options.root) : undefined;
  const submodules = new Set<string>();
  if (fixedRoot) await readGitmodules(fixedRoot, submodules, out.problems);
  const realCwd = await realpath(cwd).catch(() => cwd);
  const stateFiles = await stateSpellings(cwd, options.stateFiles ?? []);
  for (const p of paths.length ? paths : ['.']) {
    const abs = resolve(cwd, p);
    const s = await stat(abs).catch((err: NodeJS.ErrnoException) => err);
    if (s instanceof Error) {
      const dangling = s.code === 'ENOENT' && (await lstat(abs).catch(() => undefined))?.isSymbolicLink();
      out.problems.push({ path: abs, message: dangling ? 'a symbolic link to a path that does not exist' : s.code === 'ENOENT' ? 'no such file or folder' : s.message });
      continue;
    }
    const real = await realpath(abs).catch(() => abs);
    if (s.isFile() && stateFiles.some((f) => isStateFamily(abs, f) || isStateFamily(real, f))) {
      out.problems.push(ownProblem(abs, 'state file'));
      continue;
    }
    const contain = fixedRoot ?? (isInside(cwd, abs) ? cwd : undefined);
    const containReal = fixedRoot ? await realpath(fixedRoot).catch(() => fixedRoot) : contain ? realCwd : real;
    if (!isInside(containReal, real)) {
      out.problems.push(escapeProblem(abs, contain ?? abs));
      continue;
    }
    if (fixedRoot && s.isDirectory() && [...submodules].some((m) => isInside(m, abs))) {
      out.problems.push(submoduleProblem(abs));
      continue;
    }
    if (s.isDirectory()) {
      const walkState: Walk = { out, seen, root: fixedRoot ?? abs, realRoot: containReal, label: contain ?? abs, submodules, stateFiles, ignorePatterns: 0 };
      await walk(abs, [], walkState, true);
    } else {
      out.files.push(abs);
      if (!out.rootOf.has(abs)) out.rootOf.set(abs, fixedRoot ?? dirname(abs));
    }
  }
  return { files: [...new Set(out.files)], problems: out.problems, rootOf: out.rootOf };
}
