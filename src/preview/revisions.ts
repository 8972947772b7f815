/**
 * The manifests of one commit, read from Git objects: the commit's files under the given paths are copied
 * into a temp folder through a private index (never the work tree), then loaded by the ordinary loader, so
 * discovery, .govopsignore and validation are the same as everywhere else. File names in diagnostics and
 * sources are relative to the preview's root, as in the work tree, and `fromFile` references resolve in the
 * work tree (secret files are not committed: CI mounts or writes them).
 */
import path from 'node:path';
import { loadManifests } from '../manifests/loader.js';
import type { ManifestSet } from '../manifests/types.js';
import { checkoutTree } from './git.js';

export interface RevisionInput {
  /** Top folder of the work tree. */
  top: string;
  /** Full SHA of the commit. */
  commit: string;
  /** Git pathspecs (relative to the top). */
  specs: string[];
  /** The preview's root (absolute, inside `top`) and its manifest paths (absolute). */
  root: string;
  absPaths: string[];
}

export async function loadRevision(input: RevisionInput): Promise<ManifestSet> {
  const tree = await checkoutTree(input.top, input.commit, input.specs);
  try {
    const root = path.join(tree.dir, path.relative(input.top, input.root));
    const paths = input.absPaths.map((p) => path.join(root, path.relative(input.root, p)));
    const set = await loadManifests(paths, { cwd: root });
    // `fromFile` references resolve beside the manifest in the checkout, as for the work tree
    for (const m of set.manifests) m.dir = path.join(input.root, path.relative(root, m.dir));
    return set;
  } finally {
    await tree.cleanup();
  }
}
