import type { HoldCheckpoint, Store } from '@tollgate/billing';
import type { Timers } from '@tollgate/core';

/** How often streams' delivered cost is written to their holds: what a crash may lose of a stream. */
export const CHECKPOINT_INTERVAL_MS = 1_000;

/** One stream's checkpointing, as {@link Checkpoints.track} starts it. */
export interface TrackedHold {
  /** The stream delivered more: its cost is read and written at the next tick. Cheap: call it per chunk. */
  touch(): void;
  /** The stream ended (settled or released): nothing more is written for it. */
  stop(): void;
}

/** The gateway's crash checkpoints: every stream's delivered cost, written on its hold once a tick. */
export interface Checkpoints {
  /** Checkpoints a hold: after each `touch`, at the next tick, `cost()` is read (it must be cheap and never throw) and written if it rose. */
  track(holdId: string, cost: () => number): TrackedHold;
}

/** Options of {@link createCheckpoints}. */
export interface CheckpointsOptions {
  store: Store;
  timers: Timers;
  /** Time between two writes (default {@link CHECKPOINT_INTERVAL_MS}). */
  intervalMs?: number;
  /** A checkpointed hold lives at least this long after each write (the gateway's hold TTL). */
  ttlMs: number;
}

interface Tracked {
  cost: () => number;
  /** Delivered more since its last write. */
  touched: boolean;
  /** What the store has for this hold, as far as this instance knows. */
  written: number;
}

const NOT_TRACKED: TrackedHold = { touch: () => {}, stop: () => {} };

/**
 * Rule 3 of the spec (a stream that stops early pays what it delivered) across a crash: at most
 * one tick every `intervalMs`, and per tick one `store.checkpoint` call with every stream whose
 * delivered cost rose (one transaction however many streams; nothing per chunk), so a killed
 * instance loses at most one tick of each stream's delivery. `releaseExpired` charges the
 * checkpoint of a hold its instance never settled. The timer is armed only while some stream has
 * delivered something not yet written; a store without `checkpoint` gets none.
 *
 * @example
 * const tracked = checkpoints.track(holdId, () => deliveredMicros());
 * // per chunk sent: tracked.touch(); once the stream is settled: tracked.stop();
 */
export function createCheckpoints(options: CheckpointsOptions): Checkpoints {
  const { store, timers, ttlMs } = options;
  const intervalMs = options.intervalMs ?? CHECKPOINT_INTERVAL_MS;
  const tracked = new Map<string, Tracked>();
  let timer: unknown;
  let writing = false;

  const arm = () => {
    if (timer === undefined) timer = timers.setTimeout(tick, intervalMs);
  };
  const tick = () => {
    timer = undefined;
    // A store slower than a tick: wait for it rather than queue writes behind it.
    if (writing) return arm();
    const batch: HoldCheckpoint[] = [];
    for (const [holdId, entry] of tracked) {
      if (!entry.touched) continue;
      entry.touched = false;
      const micros = entry.cost();
      if (micros > entry.written) batch.push({ holdId, micros, ttlMs });
    }
    if (batch.length === 0) return;
    writing = true;
    void write(batch).finally(() => {
      writing = false;
    });
  };
  const write = async (batch: HoldCheckpoint[]) => {
    let failed = false;
    try {
      await store.checkpoint?.(batch);
    } catch {
      // Nothing is lost but this tick: the next one writes the same (or higher) amounts, and a
      // store that stays down fails the stream's settle too, which is reported (`onSettleError`).
      failed = true;
    }
    for (const { holdId, micros } of batch) {
      const entry = tracked.get(holdId);
      if (entry === undefined) continue;
      if (!failed) entry.written = Math.max(entry.written, micros);
      else {
        entry.touched = true;
        arm();
      }
    }
  };

  return {
    track(holdId, cost) {
      if (store.checkpoint === undefined) return NOT_TRACKED;
      const entry: Tracked = { cost, touched: false, written: 0 };
      tracked.set(holdId, entry);
      let stopped = false;
      return {
        touch() {
          if (stopped) return;
          entry.touched = true;
          arm();
        },
        stop() {
          stopped = true;
          tracked.delete(holdId);
          entry.touched = false;
          if (timer !== undefined && ![...tracked.values()].some((other) => other.touched)) {
            timers.clearTimeout(timer);
            timer = undefined;
          }
        },
      };
    },
  };
}
