/** The CLI's logger is made at its first line at an enabled level: a command that logs nothing never loads pino. */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, deferredLogger, type Logger } from '../../src/log.js';

let dir: string;
let file: string;
let fd: number;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'govops-deferred-log-'));
  file = path.join(dir, 'out.log');
  fd = openSync(file, 'w');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function lines(): Array<Record<string, unknown>> {
  closeSync(fd);
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('deferredLogger', () => {
  it('makes nothing for lines below its level, nor for children that log nothing', () => {
    let made = 0;
    const log = deferredLogger('warn', () => (made++, createLogger({ level: 'warn', destination: fd })));
    log.info('not shown');
    log.debug({ a: 1 }, 'not shown');
    log.child({ revision: 'r1' }).info('not shown either');
    expect(log.isLevelEnabled('info')).toBe(false);
    expect(log.isLevelEnabled('warn')).toBe(true);
    expect(log.isLevelEnabled('fatal')).toBe(true);
    expect(log.level).toBe('warn');
    expect(made).toBe(0);
    expect(lines()).toEqual([]);
  });

  it('writes what the real logger writes from its first enabled line on, made once, children with their bindings in order', () => {
    let made = 0;
    const log = deferredLogger('info', () => (made++, createLogger({ level: 'info', destination: fd })));
    const child = log.child({ revision: 'r1' }).child({ resource: 'Integration/a' });
    child.debug('dropped');
    expect(made).toBe(0);
    child.warn({ code: 'X' }, 'first');
    log.info('second');
    child.info('third');
    expect(made).toBe(1);
    const out = lines();
    expect(out.map((l) => l.msg)).toEqual(['first', 'second', 'third']);
    expect(out[0]).toMatchObject({ level: 40, revision: 'r1', resource: 'Integration/a', code: 'X', app: 'govops' });
    expect(out[1]).not.toHaveProperty('revision');
    expect(out[2]).toMatchObject({ level: 30, revision: 'r1', resource: 'Integration/a' });
  });

  it('redacts as the real logger does (it is the real logger that writes)', () => {
    const log: Logger = deferredLogger('info', () => createLogger({ level: 'info', destination: fd }));
    log.info({ config: { password: 'hunter2-secret' } }, 'with a secret');
    const [line] = lines();
    expect(JSON.stringify(line)).not.toContain('hunter2-secret');
  });

  it('flush: the real logger\'s once made; before that nothing was written, and the callback is still called', () => {
    let made = 0;
    const log = deferredLogger('info', () => (made++, createLogger({ level: 'info', destination: fd })));
    let flushed = 0;
    log.flush(() => flushed++);
    expect(made).toBe(0);
    expect(flushed).toBe(1);
    log.child({ a: 1 }).info('now');
    log.child({ b: 2 }).flush(() => flushed++);
    expect(made).toBe(1);
    expect(flushed).toBe(2);
    expect(lines().map((l) => l.msg)).toEqual(['now']);
  });

  it('at silent, writes and makes nothing', () => {
    let made = 0;
    const log = deferredLogger('silent', () => (made++, createLogger({ level: 'silent', destination: fd })));
    log.fatal('no');
    log.error('no');
    expect(log.isLevelEnabled('fatal')).toBe(false);
    expect(made).toBe(0);
    expect(lines()).toEqual([]);
  });
});
