/**
 * The state journal: changes appended between full saves (O(1) per resource), replayed by loadState
 * onto the state text it extends; a stale journal, a torn last line, a corrupt one. And the ledger
 * writing through it: what is on disk after every save is what was recorded before it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/apply/ledger.js';
import { UserError } from '../../src/errors.js';
import type { DesiredIntegration } from '../../src/plan/types.js';
import { StateWriter } from '../../src/state/journal.js';
import { journalPathFor, loadState, newState, saveState } from '../../src/state/store.js';
import type { GovopsState, ManagedResource } from '../../src/state/types.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'govops-journal-'));
  file = path.join(dir, 'state.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const res = (name: string, id = '1', extra: Partial<ManagedResource> = {}): ManagedResource => ({
  kind: 'Integration',
  name,
  id,
  origin: 'created',
  specHash: 'h',
  secretFingerprints: {},
  updatedAt: new Date(0).toISOString(),
  ...extra,
});

const byName = (s: GovopsState): Record<string, string> => Object.fromEntries(s.resources.map((r) => [r.name, `${r.id}${r.pending ? `:${r.pending}` : ''}`]));

describe('state journal', () => {
  it('appended entries are replayed onto the state they extend, in order (put, replace, remove)', async () => {
    const w = new StateWriter(file);
    const base = { ...newState(), resources: [res('a'), res('b')] };
    await w.writeFull(base);
    await w.append([{ put: res('c', '', { pending: 'create', key: 'k' }) }]);
    await w.append([{ put: res('c', '7') }, { remove: { kind: 'Integration', name: 'a' } }]);
    await w.close();
    const back = await loadState(file);
    expect(byName(back)).toEqual({ b: '1', c: '7' });
    expect(back.fingerprintKey).toBe(base.fingerprintKey);
  });

  it('a journal left behind by a state that was since replaced is ignored (and removed by the full save)', async () => {
    const w = new StateWriter(file);
    const base = { ...newState(), resources: [res('a')] };
    await w.writeFull(base);
    await w.append([{ put: res('ghost', '9') }]);
    await w.close(); // (the journal's file handle: left open, it was closed by the garbage collector, with a warning)
    const stale = readFileSync(journalPathFor(file), 'utf8');
    await saveState(file, { ...base, resources: [res('a', '2')] }); // e.g. another command rewrote the state
    expect(existsSync(journalPathFor(file))).toBe(false);
    writeFileSync(journalPathFor(file), stale); // as if the process died between the rename and the removal
    expect(byName(await loadState(file))).toEqual({ a: '2' });
  });

  it('a torn last line (a crash in the middle of an append) is ignored; a bad line before the end is corruption', async () => {
    const w = new StateWriter(file);
    await w.writeFull({ ...newState(), resources: [] });
    await w.append([{ put: res('a', '1') }]);
    await w.close();
    const j = journalPathFor(file);
    writeFileSync(j, `${readFileSync(j, 'utf8')}{"remove":{"ki`);
    expect(byName(await loadState(file))).toEqual({ a: '1' });
    writeFileSync(j, `${readFileSync(j, 'utf8').replace('{"remove":{"ki', '{"put": 5}\n')}`);
    await expect(loadState(file)).rejects.toBeInstanceOf(UserError);
    await expect(loadState(file)).rejects.toThrow(/state\.json\.journal is corrupt: line 3/);
  });
});

const desired = (name: string): DesiredIntegration => ({
  kind: 'Integration',
  name,
  source: { file: 'f', line: 1, column: 1 },
  secretPaths: [],
  fingerprints: {},
  specHash: `h-${name}`,
  deleteRequested: false,
  body: { type: 'object_store', autoBootstrap: false, config: { name } },
});

describe('ledger over the journal', () => {
  it('saved(): writes what was recorded, waits for a save under way, and writes nothing when nothing changed since the last one', async () => {
    const w = new StateWriter(file);
    const calls: string[] = [];
    const ledger = new Ledger(
      newState(),
      async (s) => {
        calls.push(`full ${s.resources.length}`);
        await w.writeFull(s);
      },
      { now: () => new Date(0), journal: async (e) => (calls.push(`append ${e.length}`), w.append(e)) },
    );
    const named = (name: string) => ({ resourceKind: 'Integration' as const, name, adopt: false });
    await ledger.saved(); // the first save is always whole
    expect(calls).toEqual(['full 0']);
    await ledger.saved();
    await ledger.saved();
    expect(calls).toEqual(['full 0']); // nothing changed since: nothing written
    ledger.intendCreate(named('a'), desired('a'), 'ka');
    await ledger.saved();
    expect(calls).toEqual(['full 0', 'append 1']);
    expect((await loadState(file)).resources.map((r) => r.name)).toEqual(['a']);
    // a save under way: saved() resolves only once it is on disk
    ledger.recordLive(named('a'), desired('a'), '7');
    const running = ledger.save();
    let done = false;
    const after = ledger.saved().then(() => (done = true));
    expect(done).toBe(false);
    await running;
    await after;
    expect(calls).toEqual(['full 0', 'append 1', 'append 1']);
    expect((await loadState(file)).resources.map((r) => r.id)).toEqual(['7']);
    await w.close();
  });

  it('the first save writes the whole state, later ones append; what is on disk after each save is what was recorded; finish leaves one file', async () => {
    const w = new StateWriter(file);
    const fulls: number[] = [];
    const ledger = new Ledger(
      { ...newState(), resources: [res('old', '5')] },
      async (s) => {
        fulls.push(s.resources.length);
        await w.writeFull(s);
      },
      { now: () => new Date(0), journal: (e) => w.append(e), compactAfter: 4 },
    );
    const named = (name: string) => ({ resourceKind: 'Integration' as const, name, adopt: false });
    for (let i = 0; i < 6; i++) {
      ledger.intendCreate(named(`r${i}`), desired(`r${i}`), `k${i}`);
      await ledger.save();
      expect(byName(await loadState(file))).toEqual(byName(ledger.current));
      ledger.recordLive(named(`r${i}`), desired(`r${i}`), String(100 + i));
      await ledger.save();
      expect(byName(await loadState(file))).toEqual(byName(ledger.current));
    }
    ledger.forget(named('old'));
    ledger.setField('transitions', { 'object_store/create': [[10, 20]] });
    await ledger.finish();
    await w.close();
    // the first save, then one each time the journal passed 4 entries, then the final one
    expect(fulls.length).toBeGreaterThanOrEqual(3);
    expect(fulls.length).toBeLessThan(12);
    expect(existsSync(journalPathFor(file))).toBe(false);
    const back = await loadState(file);
    expect(byName(back)).toEqual(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`r${i}`, String(100 + i)])));
    expect(back.transitions).toEqual({ 'object_store/create': [[10, 20]] });
  });
});
