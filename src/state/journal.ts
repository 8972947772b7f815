/**
 * Writing the state during an apply at a cost that does not grow with its size: a full save (atomic,
 * src/state/store.ts) now and then, and between them each change appended to `state.json.journal`
 * (one JSON line, fsync'd) — so recording one resource costs O(1) whether the state holds 10 or 20,000.
 * The journal's first line names the sha256 of the state text it extends; `loadState` replays it onto
 * that text only (a journal left behind by a state that was since replaced is ignored).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fsyncDir, journalPathFor, resolveStatePath, saveState } from './store.js';
import type { GovopsState, JournalEntry } from './types.js';
import { isPgLocation } from './location.js';
import type { PgState } from './pg/backend.js';
import { pgState } from './pg/lazy.js';
import { assertLockStillHeld } from './lock.js';

export class StateWriter {
  private base?: string;
  private handle?: fs.FileHandle;
  /** The state file itself (a symbolic link followed), found at the first full save: the journal goes beside it. */
  private path?: string;

  /** A PostgreSQL state: every append is one small transaction of its own (no journal file). */
  private readonly pg?: Promise<PgState>;

  constructor(readonly file: string) {
    if (isPgLocation(file)) {
      this.pg = pgState(file);
      this.pg.catch(() => undefined); // reported by the first write that awaits it
    }
  }

  /** Save the whole state (atomically); the journal starts again, empty, for it. */
  async writeFull(state: GovopsState): Promise<void> {
    if (this.pg) {
      this.base = await (await this.pg).save(state);
      return;
    }
    await this.closeJournal();
    this.path ??= await resolveStatePath(this.file);
    this.base = await saveState(this.path, state); // also removes the old journal
  }

  /** Append changes (fsync'd before it resolves). A full save must come first (it fixes what they extend). */
  async append(entries: readonly JournalEntry[]): Promise<void> {
    if (entries.length === 0) return;
    if (this.base === undefined) throw new Error('state journal: append before a full save');
    if (this.pg) return (await this.pg).append(entries);
    assertLockStillHeld(this.path ?? this.file);
    if (!this.handle) {
      const file = journalPathFor(this.path ?? this.file);
      const handle = await fs.open(file, 'w', 0o600);
      try {
        await writeAll(handle, `${JSON.stringify({ base: this.base })}\n`);
        await handle.sync();
      } catch (err) {
        // No journal without its header (a disk that filled up): nothing of it is left behind.
        await handle.close();
        await fs.rm(file, { force: true });
        throw err;
      }
      this.handle = handle;
      await fsyncDir(path.dirname(path.resolve(file)));
    }
    // Not through the redactor, like the state itself: no secret in it, and govops reads it back.
    await writeAll(this.handle, entries.map((e) => `${JSON.stringify(e)}
`).join(''));
    await this.handle.datasync();
  }

  async close(): Promise<void> {
    await this.closeJournal();
  }

  private async closeJournal(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    await h?.close();
  }
}

/**
 * Write the whole text or throw. A write on a full disk may be short without an error (POSIX): taken as done, the
 * entries would be lost to a torn line while the apply believed them saved. The next write of the rest then fails
 * with ENOSPC; a torn last line is ignored when the state is read, and after a failed append the next save is a
 * full one (the ledger), never an append after the torn line.
 */
async function writeAll(handle: fs.FileHandle, text: string): Promise<void> {
  const buf = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < buf.length) {
    const { bytesWritten } = await handle.write(buf, offset, buf.length - offset);
    if (bytesWritten <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    offset += bytesWritten;
  }
}
