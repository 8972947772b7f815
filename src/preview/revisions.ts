/**
 * The manifests of one commit, read from Git objects: the commit's files under the given paths are copied
 * into a temp folder through a private index (never the work tree), then loaded by the ordinary loader, so
 * discovery, .govopsignore and validation are the same as everywhere else. File names in diagnostics and
 * sources are relative to the preview's root, as in the work tree. Discovery stays inside the copy (a
 * committed symlink leading out of it is refused), and `fromFile` references resolve in the work tree
 * (secret files are not committed: CI mounts or writes them), within the operator's secret scope.
 */
import path from 'node:path';
import { loadManifests } from '../manifests/loader.js';
import type { SecretScope } from '../manifests/secret-scope.js';
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
  secretScope?: SecretScope;
}

export async function loadRevision(input: RevisionInput): Promise<ManifestSet> {
  const tree = await checkoutTree(input.top, input.commit, input.specs);
  try {
    const root = path.join(tree.dir, path.relative(input.top, input.root));
    const paths = input.absPaths.map((p) => path.join(root, path.relative(input.root, p)));
    // nothing may leave the copy (a committed symlink is refused); `fromFile` secrets live in the work tree
    return await loadManifests(paths, {
      cwd: root,
      root: tree.dir,
      secretsOrigin: input.top,
      ...(input.secretScope ? { secretScope: input.secretScope } : {}),
    });
  } finally {
    await tree.cleanup();
  }
}
