import { systemTimers, type Timers } from '@tollgate/core';

/** Options of {@link createKeepalive}. */
export interface KeepaliveOptions {
  /** Quiet time before a keepalive, in milliseconds; default 25,000. */
  intervalMs?: number;
  /** Timers, injected so keepalive is tested without waiting; default the runtime's own. */
  timers?: Timers;
  /** The clock (milliseconds) the quiet time is measured on; default `Date.now`. */
  now?: () => number;
  /** Called on every keepalive: write `SSE_KEEPALIVE` to the stream here. */
  onKeepalive: () => void;
}

/** A running keepalive. */
export interface Keepalive {
  /** Records that an event was just sent; cheap enough to call on every chunk. */
  touch(): void;
  /** Stops the keepalive and clears its timer. */
  stop(): void;
}

/**
 * Calls `onKeepalive` after `intervalMs` without a `touch()`, then every `intervalMs` while quiet.
 * `touch()` only stores the time; the single timer re-arms itself lazily for the time still left.
 *
 * @example
 * const keepalive = createKeepalive({ onKeepalive: () => controller.enqueue(encode(SSE_KEEPALIVE)) });
 * // on every chunk: keepalive.touch(); when the stream ends: keepalive.stop();
 */
export function createKeepalive(options: KeepaliveOptions): Keepalive {
  const intervalMs = options.intervalMs ?? 25_000;
  const timers = options.timers ?? systemTimers;
  const now = options.now ?? Date.now;
  let lastEventAt = now();
  let handle: unknown;
  let stopped = false;

  function arm(ms: number): void {
    handle = timers.setTimeout(fire, ms);
  }

  function fire(): void {
    handle = undefined;
    if (stopped) return;
    const quiet = now() - lastEventAt;
    if (quiet < intervalMs) {
      arm(intervalMs - quiet);
      return;
    }
    lastEventAt = now();
    options.onKeepalive();
    if (!stopped) arm(intervalMs);
  }

  arm(intervalMs);
  return {
    touch() {
      lastEventAt = now();
    },
    stop() {
      stopped = true;
      if (handle !== undefined) timers.clearTimeout(handle);
      handle = undefined;
    },
  };
}
