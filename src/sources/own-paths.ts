/**
 * What govops itself writes, so a source never reads it back: the work folder (Git cache, revision folders,
 * snapshots) and the state file's family (`state.json`, `.journal`, `.lock`, the lock's and the state's
 * temporary files). A watched folder may hold them (`--state DIR/state.json` puts the work folder at
 * `DIR/work`): they are left out of every scan and every watch. Paths are matched as given and through
 * symbolic links (the real path of their folder), since the watched folder is read at its real path.
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { UserError } from '../errors.js';

export interface OwnFiles {
  /** The work folder (--workdir). */
  workdir: string;
  /** The state file (--state), when the state is a file. */
  statePath?: string;
}

function inside(parent: string, p: string): boolean {
  const rel = relative(parent, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export class OwnPaths {
  private constructor(
    /** Every spelling of the work folder: as given, and its real path. */
    private readonly workdirs: readonly string[],
    /** Every spelling of the state file: as given, and under its folder's real path. */
    private readonly stateFiles: readonly string[],
  ) {}

  static async of(own: OwnFiles): Promise<OwnPaths> {
    const real = async (p: string): Promise<string> => realpath(p).catch(() => p);
    const workdir = resolve(own.workdir);
    const workdirs = [...new Set([workdir, await real(workdir)])];
    const stateFiles: string[] = [];
    if (own.statePath) {
      const state = resolve(own.statePath);
      stateFiles.push(state, resolve(await real(dirname(state)), basename(state)));
    }
    return new OwnPaths(workdirs, [...new Set(stateFiles)]);
  }

  /** True for an absolute path govops writes: in the work folder, or the state file and its siblings (`state.json.*`). */
  owns(path: string): boolean {
    if (this.workdirs.some((w) => inside(w, path))) return true;
    return this.stateFiles.some((f) => path === f || (path.startsWith(`${f}.`) && !path.slice(f.length).includes(sep)));
  }

  /**
   * Why the configuration cannot be made safe, if it cannot: the watched folder is the work folder or inside it
   * (govops clears its revision folders on start, and would read nothing but itself).
   */
  refusal(watched: string, realWatched: string): UserError | undefined {
    const w = this.workdirs.find((d) => inside(d, watched) || inside(d, realWatched));
    if (!w) return undefined;
    return new UserError(
      `the watched folder ${watched} is govops' own work folder ${w} or inside it: govops would read (and clear) its own files`,
      'give --workdir a folder outside the watched one (by default it is next to the --state file)',
    );
  }
}
