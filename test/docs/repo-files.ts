/** The repository's own files as text, for the tests that hold the docs to the code. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = new URL('../../', import.meta.url).pathname;

/** A file of the repository, by its path from the root. */
export const read = (p: string): string => readFileSync(join(ROOT, p), 'utf8');

/** Every .ts file under a folder of the repository (`src`), as text. */
export function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith('.ts')) out.push(readFileSync(p, 'utf8'));
    }
  };
  walk(join(ROOT, dir));
  return out;
}
