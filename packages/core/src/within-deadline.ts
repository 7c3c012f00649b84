import type { Result } from './result';
import { systemTimers, type Timers } from './timers';

/** Why {@link withinDeadline} stopped waiting: the time ran out, or the signal aborted first. */
export interface DeadlineMissed {
  /** `deadline` when `ms` passed first, `aborted` when the signal fired first. */
  reason: 'deadline' | 'aborted';
}

/** Options of {@link withinDeadline}. */
export interface WithinDeadlineOptions {
  /** The timers the deadline runs on; default the runtime's own. */
  timers?: Timers;
  /** Stops waiting at once when it aborts (a client that left). */
  signal?: AbortSignal;
}

/**
 * Waits for `promise`, but no longer than `ms` (no limit when undefined) and no longer than
 * `signal` stays unaborted. A rejection of `promise` before then rejects; one after is ignored, so
 * a loser never becomes an unhandled rejection. The caller maps a miss to its own catalogue code
 * and stops the work it no longer waits for.
 *
 * @example
 * const reply = await withinDeadline(fetch(url, { signal: abort.signal }), 30_000, { timers });
 * if (!reply.ok) return abort.abort(), err({ code: 'upstream_error' });
 */
export function withinDeadline<T>(promise: Promise<T>, ms: number | undefined, options: WithinDeadlineOptions = {}): Promise<Result<T, DeadlineMissed>> {
  const { signal } = options;
  const timers = options.timers ?? systemTimers;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      promise.catch(() => {});
      resolve({ ok: false, error: { reason: 'aborted' } });
      return;
    }
    let handle: unknown;
    const finish = () => {
      if (handle !== undefined) timers.clearTimeout(handle);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      resolve({ ok: false, error: { reason: 'aborted' } });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (ms !== undefined) {
      handle = timers.setTimeout(
        () => {
          handle = undefined;
          finish();
          resolve({ ok: false, error: { reason: 'deadline' } });
        },
        Math.max(0, ms),
      );
    }
    // Whichever settles first wins; resolving or rejecting a settled promise does nothing.
    promise.then(
      (value) => {
        finish();
        resolve({ ok: true, value });
      },
      (error: unknown) => {
        finish();
        reject(error);
      },
    );
  });
}
