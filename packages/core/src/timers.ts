/**
 * The timers a package schedules with, injected so that deadlines, keepalives and retries are
 * tested on fake time. The clock is a separate `now()` option wherever one is needed.
 */
export interface Timers {
  /** Schedules `fn` after `ms` milliseconds and returns a handle for `clearTimeout`. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a scheduled call; a handle that already ran or was cleared is ignored. */
  clearTimeout(handle: unknown): void;
}

/** The runtime's own timers (`globalThis.setTimeout`), the default wherever `Timers` is optional. */
export const systemTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  // The handle came from `globalThis.setTimeout`, whose type differs per runtime; clearTimeout takes any.
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
};
