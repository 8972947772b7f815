/**
 * Folder entries no manifest discovery reads or looks into: hidden ones (`.git`, `.worktrees`, editor temp files like
 * `.foo.swp`) and `node_modules`. One rule for the loader (src/manifests/discover.ts) and the directory source's
 * snapshot and watcher (src/sources/snapshot.ts), so `apply DIR` and `run --dir` read the same files.
 */
export function isSkippedName(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}
