/** The pretty log of `npm start` on a terminal: a revision is shortened on every line, the JSON log keeps it whole. */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, shortRevision } from '../../src/log.js';

const REV = `sha256:${'3f2a9c'.repeat(10)}abcd`; // 71 characters, as a folder revision

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('revision ids in the pretty log', () => {
  it('are cut to 12 hex digits on each line of a reconcile', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'govops-log-'));
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    const log = createLogger({ pretty: true, destination: fd }).child({ revision: REV, reason: 'revision' });
    log.info('reconcile started');
    log.info({ changes: 3 }, 'applied');
    closeSync(fd);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').filter(Boolean)).toHaveLength(2);
    expect(text).not.toContain(REV);
    expect(text.match(/sha256:3f2a9c3f2a9c…/g)).toHaveLength(2);
  });

  it('shortRevision keeps short ids and branch names as they are', () => {
    expect(shortRevision(REV)).toBe('sha256:3f2a9c3f2a9c…');
    expect(shortRevision('main@0123abc')).toBe('main@0123abc');
    expect(shortRevision(`git:${'a'.repeat(40)}-dirty`)).toBe(`git:${'a'.repeat(12)}…-dirty`);
  });
});
