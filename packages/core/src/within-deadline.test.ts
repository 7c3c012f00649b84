import { describe, expect, it } from 'vitest';
import type { Timers } from './timers';
import { withinDeadline } from './within-deadline';

/** Timers the test fires by hand. */
function manualTimers() {
  let next = 0;
  const pending = new Map<number, { fn: () => void; ms: number }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(++next, { fn, ms });
      return next;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
  };
  const fireAll = () => {
    for (const [handle, timer] of [...pending]) {
      pending.delete(handle);
      timer.fn();
    }
  };
  return { timers, pending, fireAll };
}

describe('withinDeadline', () => {
  it('gives the value when the promise settles first, and clears its timer', async () => {
    const { timers, pending } = manualTimers();
    const answer = withinDeadline(Promise.resolve(42), 1_000, { timers });
    expect([...pending.values()].map((timer) => timer.ms)).toEqual([1_000]);
    expect(await answer).toEqual({ ok: true, value: 42 });
    expect(pending.size).toBe(0);
  });

  it('misses with reason deadline when the timer fires first, and ignores a later rejection', async () => {
    const { timers, pending, fireAll } = manualTimers();
    let reject: (error: Error) => void = () => {};
    const never = new Promise<number>((_, fail) => {
      reject = fail;
    });
    const answer = withinDeadline(never, 50, { timers });
    fireAll();
    expect(await answer).toEqual({ ok: false, error: { reason: 'deadline' } });
    reject(new Error('late failure'));
    await Promise.resolve();
    expect(pending.size).toBe(0);
  });

  it('passes a rejection through while the deadline has not passed', async () => {
    const { timers, pending } = manualTimers();
    await expect(withinDeadline(Promise.reject(new Error('boom')), 50, { timers })).rejects.toThrow('boom');
    expect(pending.size).toBe(0);
  });

  it('waits without a deadline when ms is undefined', async () => {
    const { timers, pending } = manualTimers();
    const answer = withinDeadline(Promise.resolve('x'), undefined, { timers });
    expect(pending.size).toBe(0);
    expect(await answer).toEqual({ ok: true, value: 'x' });
  });

  it('misses with reason aborted when the signal aborts first, or was aborted already', async () => {
    const { timers, pending } = manualTimers();
    const controller = new AbortController();
    const answer = withinDeadline(new Promise<never>(() => {}), 1_000, { timers, signal: controller.signal });
    controller.abort();
    expect(await answer).toEqual({ ok: false, error: { reason: 'aborted' } });
    expect(pending.size).toBe(0);
    expect(await withinDeadline(Promise.resolve(1), 1_000, { timers, signal: controller.signal })).toEqual({ ok: false, error: { reason: 'aborted' } });
    expect(pending.size).toBe(0);
  });

  it('runs on the runtime timers by default', async () => {
    expect(await withinDeadline(new Promise<never>(() => {}), 1)).toEqual({ ok: false, error: { reason: 'deadline' } });
  });
});
