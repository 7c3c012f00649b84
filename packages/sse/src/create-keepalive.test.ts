import { describe, expect, it } from 'vitest';
import type { Timers } from '@tollgate/core';
import { createKeepalive } from './create-keepalive';

function fakeTimers() {
  let now = 0;
  let nextId = 1;
  const pending = new Map<number, { at: number; fn: () => void }>();
  let scheduled = 0;
  const timers: Timers = {
    setTimeout(fn, ms) {
      scheduled++;
      const id = nextId++;
      pending.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimeout(handle) {
      pending.delete(handle as number);
    },
  };
  function advance(ms: number): void {
    const end = now + ms;
    for (;;) {
      const due = [...pending.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      pending.delete(due[0]);
      now = due[1].at;
      due[1].fn();
    }
    now = end;
  }
  return { timers, now: () => now, advance, pending, scheduled: () => scheduled };
}

describe('createKeepalive', () => {
  it('fires after the interval without a touch, then every interval', () => {
    const clock = fakeTimers();
    const fired: number[] = [];
    createKeepalive({ intervalMs: 25_000, timers: clock.timers, now: clock.now, onKeepalive: () => fired.push(clock.now()) });
    clock.advance(24_999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([25_000]);
    clock.advance(50_000);
    expect(fired).toEqual([25_000, 50_000, 75_000]);
  });

  it('waits a full interval after the last touch, without re-arming per touch', () => {
    const clock = fakeTimers();
    const fired: number[] = [];
    const keepalive = createKeepalive({ intervalMs: 1000, timers: clock.timers, now: clock.now, onKeepalive: () => fired.push(clock.now()) });
    for (let t = 0; t < 10; t++) {
      clock.advance(300);
      keepalive.touch();
    }
    // 1,000 touches cost no timer calls.
    for (let i = 0; i < 1000; i++) keepalive.touch();
    expect(fired).toEqual([]);
    expect(clock.scheduled()).toBeLessThanOrEqual(5);
    clock.advance(999);
    expect(fired).toEqual([]);
    clock.advance(1);
    expect(fired).toEqual([4000]);
  });

  it('defaults to 25 s', () => {
    const clock = fakeTimers();
    let count = 0;
    createKeepalive({ timers: clock.timers, now: clock.now, onKeepalive: () => count++ });
    clock.advance(24_999);
    expect(count).toBe(0);
    clock.advance(1);
    expect(count).toBe(1);
  });

  it('stop() clears the timer and no keepalive follows', () => {
    const clock = fakeTimers();
    let count = 0;
    const keepalive = createKeepalive({ intervalMs: 1000, timers: clock.timers, now: clock.now, onKeepalive: () => count++ });
    clock.advance(1500);
    expect(count).toBe(1);
    keepalive.stop();
    expect(clock.pending.size).toBe(0);
    clock.advance(10_000);
    expect(count).toBe(1);
  });

  it('stop() inside onKeepalive leaves no timer', () => {
    const clock = fakeTimers();
    const keepalive = createKeepalive({ intervalMs: 10, timers: clock.timers, now: clock.now, onKeepalive: () => keepalive.stop() });
    clock.advance(10);
    expect(clock.pending.size).toBe(0);
  });

  it('runs on the real timers', async () => {
    let count = 0;
    const keepalive = createKeepalive({ intervalMs: 5, onKeepalive: () => count++ });
    // Waits for the keepalive itself, not a fixed time a busy machine may not give the timer.
    await expect.poll(() => count, { timeout: 5_000, interval: 1 }).toBeGreaterThanOrEqual(1);
    keepalive.stop();
    const after = count;
    // Three intervals on the real timers: a timer left armed would have fired by then.
    await new Promise((resolve) => setTimeout(resolve, 15));
    expect(count).toBe(after);
  });
});
