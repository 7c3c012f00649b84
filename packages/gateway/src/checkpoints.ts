import type { HoldCheckpoint, Store } from '@tollgate/billing';
import type { Timers } from '@tollgate/core';

/** How often streams' delivered cost is written to their holds: what a crash may lose of a stream. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * How often every live hold is renewed for a hold TTL of `ttlMs`: a third of it (at least 1 ms),
 * so a live hold always has at least two thirds of its TTL left, and one failed renewal still
 * leaves time for the retry (a tick later) before it could expire.
 */
export function renewalIntervalMs(ttlMs: number): number {
  return Math.max(1, Math.floor(ttlMs / 3));
}

/** One hold's tracking, as {@link Checkpoints.track} starts it. */
export interface TrackedHold {
  /** The stream delivered more: its cost is read and written at the next tick. Cheap: call it per chunk. */
  touch(): void;
  /** The request ended (settled or released): the hold is neither renewed nor written any more. */
  stop(): void;
}

/**
 * The gateway's live holds: each is renewed well before its expiry for as long as its request
 * lives, and a stream's delivered cost is written on it once a tick (crash checkpoints).
 */
export interface Checkpoints {
  /**
   * Keeps a hold alive until `stop`, and checkpoints it: after each `touch`, at the next tick,
   * `cost()` (default 0: a request that delivers nothing before it settles) is read — it must be
   * cheap and never throw — and written if it rose. Tracking a hold already tracked replaces its
   * `cost` (when one is given) and returns the same handle (a stream that starts on a hold kept alive since admission).
   */
  track(holdId: string, cost?: () => number): TrackedHold;
}

/** Options of {@link createCheckpoints}. */
export interface CheckpointsOptions {
  store: Store;
  timers: Timers;
  /** Time between two checkpoint writes (default {@link CHECKPOINT_INTERVAL_MS}). */
  intervalMs?: number;
  /** A written hold lives at least this long after each write (the gateway's hold TTL). */
  ttlMs: number;
  /** Time between two renewals of every live hold (default {@link renewalIntervalMs} of `ttlMs`). */
  renewEveryMs?: number;
}

interface Tracked {
  cost: () => number;
  /** Delivered more since its last write. */
  touched: boolean;
  /** Owed a write whatever its cost: a renewal, or a write that failed. */
  due: boolean;
  /** What the store has for this hold, as far as this instance knows. */
  written: number;
  handle: TrackedHold;
}

const NOT_TRACKED: TrackedHold = { touch: () => {}, stop: () => {} };
const NOTHING_DELIVERED = () => 0;

/**
 * Every live hold of this instance, kept alive and checkpointed through one store method,
 * `store.checkpoint`, one call (one transaction) per tick for all the holds it writes:
 *
 * - **Renewal**: every `renewEveryMs` (a third of the hold TTL) while any hold is tracked, every
 *   tracked hold is written with its current recorded amount (0 for a request that delivered
 *   nothing), which pushes its expiry to a TTL from now. A request of any length keeps its hold;
 *   only the holds of a dead instance (its timers stopped) expire, and `releaseExpired` closes them.
 * - **Checkpoints** (rule 3 of the spec, a stream that stops early pays what it delivered, across
 *   a crash): at most one tick every `intervalMs` while some stream delivered something not yet
 *   written, with every hold whose delivered cost rose, so a killed instance loses at most one tick
 *   of each stream's delivery. `releaseExpired` charges the checkpoint of a hold never settled.
 *
 * Per request this costs a Map set and delete; nothing per chunk but a flag. No timer is armed
 * while no hold is tracked. A store without `checkpoint` gets neither renewals nor checkpoints: its
 * holds live their TTL from the hold, whatever the request's length.
 *
 * @example
 * const tracked = checkpoints.track(holdId); // at admission: kept alive
 * checkpoints.track(holdId, () => deliveredMicros()); // once it streams: the same handle
 * // per chunk sent: tracked.touch(); once the request is settled or released: tracked.stop();
 */
export function createCheckpoints(options: CheckpointsOptions): Checkpoints {
  const { store, timers, ttlMs } = options;
  const intervalMs = options.intervalMs ?? CHECKPOINT_INTERVAL_MS;
  const renewEveryMs = options.renewEveryMs ?? renewalIntervalMs(ttlMs);
  const tracked = new Map<string, Tracked>();
  /** The next checkpoint tick (armed while something is touched or owed a write). */
  let timer: unknown;
  /** The next renewal (armed while any hold is tracked). */
  let renewal: unknown;
  let writing = false;

  const arm = () => {
    if (timer === undefined) timer = timers.setTimeout(tick, intervalMs);
  };
  const armRenewal = () => {
    renewal = timers.setTimeout(renew, renewEveryMs);
  };
  const renew = () => {
    renewal = undefined;
    if (tracked.size === 0) return;
    armRenewal();
    for (const entry of tracked.values()) entry.due = true;
    write();
  };
  const tick = () => {
    timer = undefined;
    write();
  };
  const write = () => {
    // A store slower than a tick: wait for it rather than queue writes behind it.
    if (writing) return arm();
    const batch: HoldCheckpoint[] = [];
    for (const [holdId, entry] of tracked) {
      let micros = entry.written;
      if (entry.touched) {
        entry.touched = false;
        micros = Math.max(micros, entry.cost());
      }
      if (micros <= entry.written && !entry.due) continue;
      entry.due = false;
      batch.push({ holdId, micros, ttlMs });
    }
    if (batch.length === 0) return;
    writing = true;
    void send(batch).finally(() => {
      writing = false;
    });
  };
  const send = async (batch: HoldCheckpoint[]) => {
    let failed = false;
    try {
      await store.checkpoint?.(batch);
    } catch {
      // Nothing is lost but this tick: the next one writes the same (or higher) amounts and
      // renews again, well before the holds expire; a store that stays down fails the requests'
      // settles too, which are reported (`onSettleError`).
      failed = true;
    }
    for (const { holdId, micros } of batch) {
      const entry = tracked.get(holdId);
      if (entry === undefined) continue;
      if (!failed) entry.written = Math.max(entry.written, micros);
      else {
        entry.touched = true;
        entry.due = true;
        arm();
      }
    }
  };

  return {
    track(holdId, cost) {
      if (store.checkpoint === undefined) return NOT_TRACKED;
      const existing = tracked.get(holdId);
      if (existing !== undefined) {
        if (cost !== undefined) existing.cost = cost;
        return existing.handle;
      }
      let stopped = false;
      const entry: Tracked = {
        cost: cost ?? NOTHING_DELIVERED,
        touched: false,
        due: false,
        written: 0,
        handle: {
          touch() {
            if (stopped) return;
            entry.touched = true;
            arm();
          },
          stop() {
            if (stopped) return;
            stopped = true;
            tracked.delete(holdId);
            // O(1): with other holds left, a tick already armed just finds less (or nothing) to write.
            if (tracked.size > 0) return;
            if (renewal !== undefined) timers.clearTimeout(renewal);
            if (timer !== undefined) timers.clearTimeout(timer);
            renewal = undefined;
            timer = undefined;
          },
        },
      };
      tracked.set(holdId, entry);
      if (renewal === undefined) armRenewal();
      return entry.handle;
    },
  };
}
