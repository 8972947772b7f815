import { Writable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LineBuffer } from '../../src/cli/commands/apply-action.js';

/** A stream that keeps each write as it came. */
function recorder(): { out: NodeJS.WritableStream; writes: string[] } {
  const writes: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  return { out, writes };
}

describe("apply's progress lines (LineBuffer)", () => {
  it('lines of one turn of the event loop go out in one write, in order, with the same bytes', async () => {
    const { out, writes } = recorder();
    const b = new LineBuffer(out);
    for (let i = 0; i < 500; i++) b.write(`Webhook/hook-${i}: create ok (1ms)\n`);
    expect(writes).toEqual([]); // nothing written within the turn
    await nextTurn();
    expect(writes).toHaveLength(1);
    expect(writes[0]).toBe(Array.from({ length: 500 }, (_, i) => `Webhook/hook-${i}: create ok (1ms)\n`).join(''));
    b.write('next\n');
    await nextTurn();
    expect(writes).toEqual([writes[0], 'next\n']);
  });

  it('flush writes what is held at once (before the result is printed); 64 KiB held are written without waiting', async () => {
    const { out, writes } = recorder();
    const b = new LineBuffer(out);
    b.write('a\n');
    b.flush();
    expect(writes).toEqual(['a\n']);
    b.flush();
    expect(writes).toEqual(['a\n']); // nothing held: no empty write
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) b.write(line);
    expect(writes).toHaveLength(2); // written as it reached 64 KiB
    expect(writes[1]).toBe(line.repeat(64));
    await nextTurn();
    expect(writes).toHaveLength(2);
  });
});
