import path from 'node:path';

/** Whether path `p` is `root` or lies under it (lexically: both already resolved, links followed by the caller). */
export function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}
