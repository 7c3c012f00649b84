/**
 * Time for gateway tests (not exported): a manual clock, timers on it that the test fires by moving
 * the clock, and real timers that count what is still armed, so a test can show none leaked.
 */

import type { Timers } from '@tollgate/core';

/** A clock the tests move by hand. */
export interface ManualClock {
  now: () => number;
  advance(ms: number): void;
}

/** A manual clock starting at a fixed time. */
export function manualClock(start = 1_800_000_000_000): ManualClock {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

/** Lets pending promise chains and stream pipes run. */
export async function flush(): Promise<void> {
  // Several turns: a chunk crosses the fake upstream, the provider stream and the client stream.
  for (let i = 0; i < 6; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Timers on a manual clock, armed by the gateway and fired, in order, when the test moves the clock. */
export interface ManualTimers {
  timers: Timers;
  /** Timer handles armed and neither fired nor cleared. */
  readonly pending: number;
  /** The fake upstream's wait (drip faults) on the same clock; it clears its timer on abort. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Moves the clock by `ms`, firing what falls due in order and letting promises run after each. */
  advance(ms: number): Promise<void>;
  /** Moves the clock by `ms`, firing what falls due in order in one synchronous pass (no promise runs in between). */
  advanceNow(ms: number): void;
}

/** Timers on `clock`; nothing fires until the test calls `advance` or `advanceNow`. */
export function manualTimers(clock: ManualClock): ManualTimers {
  let next = 0;
  const pending = new Map<number, { at: number; fn: () => void }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(++next, { at: clock.now() + ms, fn });
      return next;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
  };
  // One walk for both kinds of advance: fires each due timer (earliest first) and yields after it,
  // so the async advance can let promises run there; a timer armed by a fired one is seen too.
  function* fireDue(ms: number): Generator<void> {
    const end = clock.now() + ms;
    for (;;) {
      let due: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of pending) if (entry[1].at <= end && (!due || entry[1].at < due[1].at)) due = entry;
      if (!due) break;
      pending.delete(due[0]);
      if (due[1].at > clock.now()) clock.advance(due[1].at - clock.now());
      due[1].fn();
      yield;
    }
    clock.advance(end - clock.now());
  }
  return {
    timers,
    get pending() {
      return pending.size;
    },
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const onAbort = () => {
          timers.clearTimeout(handle);
          reject(signal.reason);
        };
        const handle = timers.setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    async advance(ms) {
      for (const _ of fireDue(ms)) await flush();
      await flush();
    },
    advanceNow(ms) {
      for (const _ of fireDue(ms));
    },
  };
}

/** Real timers that remember which handles are still armed (neither fired nor cleared). */
export function trackedTimers(): { timers: Timers; readonly pending: number } {
  const live = new Set<ReturnType<typeof setTimeout>>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      const handle = setTimeout(() => {
        live.delete(handle);
        fn();
      }, ms);
      live.add(handle);
      return handle;
    },
    clearTimeout: (handle) => {
      clearTimeout(handle as ReturnType<typeof setTimeout>);
      live.delete(handle as ReturnType<typeof setTimeout>);
    },
  };
  return {
    timers,
    get pending() {
      return live.size;
    },
  };
}
