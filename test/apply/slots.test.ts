import { describe, expect, it } from 'vitest';
import { Slots } from '../../src/apply/slots.js';

/** A call that settles when the test says so. */
function gate<T = string>(): { promise: Promise<T>; open(v: T): void; fail(e: unknown): void } {
  let open!: (v: T) => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<T>((ok, ko) => {
    open = ok;
    fail = ko;
  });
  return { promise, open, fail };
}

const ticks = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('Slots (the apply concurrency limit)', () => {
  it('tells when it becomes idle: the last running call ended and none waits (the poller spaces its lists less then)', async () => {
    let idle = 0;
    const slots = new Slots(1, () => idle++);
    const gates = [gate(), gate()];
    const results = gates.map((g) => slots.add(() => g.promise));
    gates[0]!.open('a');
    await results[0];
    await ticks();
    expect(idle).toBe(0); // the second call took the slot
    gates[1]!.fail(new Error('refused'));
    await expect(results[1]).rejects.toThrow('refused');
    await ticks();
    expect(idle).toBe(1);
    // busy again, idle again
    const third = gate();
    const r3 = slots.add(() => third.promise);
    expect(idle).toBe(1);
    third.open('c');
    await r3;
    await ticks();
    expect(idle).toBe(2);
  });

  it('runs at most `concurrency` calls at once, the next one as soon as a slot is free', async () => {
    const slots = new Slots(2);
    const gates = [gate(), gate(), gate()];
    const started: number[] = [];
    const results = gates.map((g, i) =>
      slots.add(() => {
        started.push(i);
        return g.promise;
      }),
    );
    expect(started).toEqual([0, 1]); // started at once, synchronously
    expect(slots.pending).toBe(2);
    expect(slots.size).toBe(1);
    gates[1]!.open('b');
    await expect(results[1]).resolves.toBe('b');
    await ticks();
    expect(started).toEqual([0, 1, 2]);
    gates[0]!.open('a');
    gates[2]!.open('c');
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c']);
  });

  it('starts a waiting call of a higher priority first; one priority in the order added', async () => {
    const slots = new Slots(1);
    const first = gate();
    const order: string[] = [];
    const run = (name: string) => (): Promise<void> => {
      order.push(name);
      return Promise.resolve();
    };
    const all = [
      slots.add(() => first.promise),
      slots.add(run('new-1')),
      slots.add(run('new-2'), { priority: 0 }),
      slots.add(run('continue-1'), { priority: 1 }),
      slots.add(run('batch'), { priority: 2 }),
      slots.add(run('continue-2'), { priority: 1 }),
    ];
    expect(slots.size).toBe(5);
    first.open('x');
    await Promise.all(all);
    expect(order).toEqual(['batch', 'continue-1', 'continue-2', 'new-1', 'new-2']);
  });

  it('a call that throws (at once or later) rejects with its error and frees its slot', async () => {
    const slots = new Slots(1);
    const thrown = slots.add(() => {
      throw new Error('not started');
    });
    const later = gate();
    const failing = slots.add(() => later.promise);
    const after = slots.add(() => Promise.resolve('ran'));
    await expect(thrown).rejects.toThrow('not started');
    later.fail(new Error('refused'));
    await expect(failing).rejects.toThrow('refused');
    await expect(after).resolves.toBe('ran');
    expect(slots.pending).toBe(0);
  });

  it('onIdle resolves once nothing runs or waits (at once when idle)', async () => {
    const slots = new Slots(1);
    await slots.onIdle();
    const a = gate();
    const b = gate();
    void slots.add(() => a.promise);
    void slots.add(() => b.promise);
    let idle = false;
    const waiting = slots.onIdle().then(() => (idle = true));
    a.open('a');
    await ticks();
    expect(idle).toBe(false); // b still runs
    b.open('b');
    await waiting;
    expect(idle).toBe(true);
  });

  it('a call waiting outside its slot (lease.outside) lets others run, then takes a slot again ahead of lower priorities', async () => {
    const slots = new Slots(1);
    const order: string[] = [];
    const wait = gate();
    const resumed = gate();
    const waiting = slots.add(async (lease) => {
      order.push('a starts');
      const v = await lease.outside(() => wait.promise, 1);
      order.push(`a resumes after ${v}`);
      await resumed.promise;
      return 'a';
    });
    const b = gate();
    const running = slots.add(async () => {
      order.push('b starts');
      return b.promise;
    });
    const c = slots.add(async () => {
      order.push('c starts');
      return 'c';
    });
    await ticks();
    expect(order).toEqual(['a starts', 'b starts']); // a's slot is b's while a waits
    expect(slots.pending).toBe(1);
    wait.open('its wait');
    await ticks();
    expect(order).toEqual(['a starts', 'b starts']); // a waits for the slot b holds
    b.open('b');
    await expect(running).resolves.toBe('b');
    await ticks();
    expect(order).toEqual(['a starts', 'b starts', 'a resumes after its wait']); // before c: a higher priority
    resumed.open('');
    await expect(waiting).resolves.toBe('a');
    await expect(c).resolves.toBe('c');
    expect(slots.idle).toBe(true);
    // a wait that fails: the call takes its slot again, then rejects with the wait's error, and frees the slot
    const failing = slots.add((lease) => lease.outside(() => Promise.reject(new Error('gone'))));
    await expect(failing).rejects.toThrow('gone');
    expect(slots.idle).toBe(true);
  });

  it('refuses a concurrency below 1', () => {
    expect(() => new Slots(0)).toThrow(RangeError);
  });
});
