import type { SourceHealth } from './health.js';

/**
 * A source of manifest revisions (Git or a watched directory). Each revision is an immutable
 * folder (a Git worktree or a snapshot copy) that stays on disk until the source is told it is
 * no longer needed (`retain`), so the daemon can keep resyncing the last GOOD revision while a
 * newer, invalid one is rejected.
 */

export interface Revision {
  /** Commit SHA, or a content digest (`sha256:<hex>`) of the manifest set. */
  id: string;
  /** Immutable folder holding this revision's files. */
  root: string;
  /** Manifest paths relative to `root` (e.g. `['manifests/']` or `['.']`). */
  paths: string[];
  /** How to show `root` to a human (the repo path or the watched directory), for file:line reports. */
  display: string;
  /**
   * Where `root`'s files really are when `root` is a copy (the directory source's snapshot holds the
   * manifests only, never secret files): the default secrets root.
   */
  origin?: string;
  /** When the source saw it (ISO): the time of day, shown (/status), never compared (NTP may set it back). */
  observedAt: string;
  /**
   * In which order this process's sources saw their revisions (`nextRevisionOrder`: later is larger, whatever the
   * time of day does): what tells the daemon's loop which of two revisions is the newer one. 0: not known.
   */
  order: number;
}

let published = 0;

/** The `order` of a revision a source sees now: one counter for the process, so later is always larger. */
export function nextRevisionOrder(): number {
  return ++published;
}

export interface SourceDescription {
  type: 'git' | 'dir';
  /** Repository URL with credentials removed, or the directory. */
  location: string;
  branch?: string;
  path?: string;
}

export interface Source {
  describe(): SourceDescription;
  /**
   * Why the configuration can never work (a UserError), checked before the daemon binds its port or claims anything:
   * a refused start logs no "listening" line first.
   */
  preflight?(): Promise<void>;
  /** Start watching/fetching. Resolves after the first look (a failure there is logged, not thrown). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Called for every new revision (never twice for the same content). */
  onRevision(cb: (revision: Revision) => void): void;
  /** The newest revision seen, if any. */
  current(): Revision | undefined;
  /** Look now (push notification). Coalesced with a look already running. Resolves when done. */
  refresh(): Promise<void>;
  /** Drop every revision folder except those with these ids (and the current one). */
  retain(ids: Iterable<string>): Promise<void>;
  /** How its looks (fetches, scans) are going: the last attempt, and while they fail the error and since when. */
  health(): SourceHealth;
}

/** Hooks for metrics, shared by both sources. */
export interface SourceMetricsHooks {
  /** A fetch/scan finished (durationSec), ok or not. */
  onFetch?(durationSec: number, ok: boolean): void;
}

/** How a work folder that cannot be created is reported (the Git cache, revision folders, snapshots). */
export const WORK_DIR = {
  what: 'the work folder',
  hint: 'choose a folder govops can create and write: --workdir PATH (default: next to the --state file)',
};
