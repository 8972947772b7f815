/** Find manifest files: `*.yaml` / `*.yml` under the given paths, honouring `.govopsignore`. */
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { IGNORE_FILE, isIgnored, parseIgnore, type IgnoreRule } from './ignore.js';

export interface Discovery {
  /** Absolute paths, in a stable order, each once. */
  files: string[];
  /** Paths that do not exist or cannot be read (absolute), with the reason. */
  problems: Array<{ path: string; message: string }>;
}

interface Scope {
  dir: string;
  rules: IgnoreRule[];
}

export const MANIFEST_EXT = /\.ya?ml$/i;

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

async function walk(dir: string, scopes: Scope[], out: Discovery, seen: Set<string>): Promise<void> {
  const real = await realpath(dir).catch(() => dir);
  if (seen.has(real)) return; // symlink loops
  seen.add(real);
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    out.problems.push({ path: dir, message: `cannot read folder: ${(err as Error).message}` });
    return;
  }
  let here = scopes;
  if (entries.some((e) => e.name === IGNORE_FILE && e.isFile())) {
    const text = await readFile(join(dir, IGNORE_FILE), 'utf8');
    here = [...scopes, { dir, rules: parseIgnore(text) }];
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const full = join(dir, e.name);
    let isDir = e.isDirectory();
    let isFile = e.isFile();
    if (e.isSymbolicLink()) {
      const s = await stat(full).catch(() => undefined);
      isDir = Boolean(s?.isDirectory());
      isFile = Boolean(s?.isFile());
    }
    if (!isDir && !(isFile && MANIFEST_EXT.test(e.name))) continue;
    if (here.some((s) => isIgnored(s.rules, toPosix(relative(s.dir, full)), isDir))) continue;
    if (isDir) await walk(full, here, out, seen);
    else out.files.push(full);
  }
}

/** Walk the paths (relative to cwd). A path naming a file is taken as it is, whatever its name. */
export async function findManifestFiles(paths: readonly string[], cwd: string): Promise<Discovery> {
  const out: Discovery = { files: [], problems: [] };
  const seen = new Set<string>();
  for (const p of paths.length ? paths : ['.']) {
    const abs = resolve(cwd, p);
    const s = await stat(abs).catch((err: NodeJS.ErrnoException) => err);
    if (s instanceof Error) {
      out.problems.push({ path: abs, message: s.code === 'ENOENT' ? 'no such file or folder' : s.message });
    } else if (s.isDirectory()) {
      await walk(abs, [], out, seen);
    } else {
      out.files.push(abs);
    }
  }
  return { files: [...new Set(out.files)], problems: out.problems };
}
