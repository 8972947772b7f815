/**
 * Before a render command runs on a revision (`govops run --render`), the revision's files are checked for symbolic
 * links that lead outside it. A commit may add `base/extra.yaml -> /var/run/secrets/…` or `-> ../../state.json`; a
 * render tool that follows links (helm, a script) would copy what it points to into the manifests, and from there
 * into a field sent to a host the commit chose. Without `--render`, discovery already refuses such a link as a
 * manifest (src/manifests/discover.ts); with it, govops does not know which files the tool reads, so any such link
 * in the revision rejects it. Links inside the revision are fine; `.git` is not looked into.
 */
import { readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from '../util/inside.js';

/** Paths (relative, with `/`) of the symbolic links under `root` that lead outside it, dangling ones by their text; at most `limit`. */
export async function linksLeaving(root: string, limit = 5): Promise<string[]> {
  const realRoot = await realpath(root);
  const found: string[] = [];
  const folders = [realRoot];
  while (folders.length > 0 && found.length < limit) {
    const dir = folders.pop()!;
    const entries = await readdir(dir, { withFileTypes: true });
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.git') folders.push(full);
      } else if (e.isSymbolicLink()) {
        const target = await realpath(full).catch(async () => path.resolve(dir, await readlink(full)));
        if (!isInside(realRoot, target)) found.push(path.relative(realRoot, full).split(path.sep).join('/'));
        if (found.length >= limit) break;
      }
    }
  }
  return found.sort();
}
