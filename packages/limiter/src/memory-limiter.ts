import { LRUCache } from 'lru-cache';
import { currentTat, gcra } from './gcra';
import type { AcquireResult, LimiterStore, RateLimit, RateResult, Semaphore } from './store';

/** Options of {@link memoryLimiter}. */
export interface MemoryLimiterOptions {
  /** Rate states kept at most (default 100,000); the least recently used is forgotten beyond it. */
  maxKeys?: number;
}

/** Expired leases are swept from every key once per this many acquires. */
const SWEEP_EVERY = 1024;

/**
 * A `LimiterStore` in this process's memory, for one gateway instance.
 *
 * Memory stays bounded whatever the number of accounts:
 * - Rate states (one number per key) live in an LRU of `maxKeys`. A state whose TAT has passed
 *   equals no state, and a state lives at most `burst x interval` after its last use (8 s for the
 *   spec's limits), so evicting the least recently used key is exact unless more than `maxKeys`
 *   keys were used within that window; past it, the forgotten key gets a fresh burst (fails
 *   generous, never refuses wrongly).
 * - Leases are never evicted: dropping a live one would let an account exceed its in-flight
 *   limit. Their count is the number of requests in flight (bounded by `maxInFlight` of the
 *   limiter); expired leases and empty keys are swept, so a leaked lease costs memory only
 *   until it expires.
 *
 * @example
 * const limiter = createLimiter({ store: memoryLimiter() });
 */
export function memoryLimiter(options: MemoryLimiterOptions = {}): LimiterStore {
  const tats = new LRUCache<string, number>({ max: options.maxKeys ?? 100_000 });
  const leases = new Map<string, Map<string, number>>();
  let acquires = 0;

  /** Live leases of a key after dropping the expired ones; deletes the key when none is left. */
  const live = (key: string, now: number): Map<string, number> | undefined => {
    const held = leases.get(key);
    if (held === undefined) return undefined;
    for (const [leaseId, expiry] of held) if (expiry <= now) held.delete(leaseId);
    if (held.size === 0) leases.delete(key);
    return held.size === 0 ? undefined : held;
  };

  return {
    local: true,
    async rate(limits: RateLimit[], now: number): Promise<RateResult> {
      const next: [key: string, tat: number][] = [];
      let index = -1;
      let retryAfterMs = 0;
      for (const [i, limit] of limits.entries()) {
        const step = gcra(tats.get(limit.key), limit, now);
        next.push([limit.key, step.tat]);
        if (step.waitMs > 0) {
          if (index < 0) index = i;
          retryAfterMs = Math.max(retryAfterMs, step.waitMs);
        }
      }
      if (index >= 0) {
        // A TAT read as less than held (further ahead than any admission leaves) is kept as read,
        // so its wait runs down; nothing is consumed.
        for (const limit of limits) {
          const stored = tats.get(limit.key);
          const read = currentTat(stored, limit, now);
          if (stored !== undefined && read < stored) tats.set(limit.key, read);
        }
        return { ok: false, error: { index, retryAfterMs } };
      }
      for (const [key, tat] of next) tats.set(key, tat);
      return { ok: true, value: undefined };
    },

    async refund(limits: RateLimit[], now: number): Promise<void> {
      for (const limit of limits) {
        const stored = tats.get(limit.key);
        if (stored === undefined) continue;
        const tat = stored - limit.intervalMs;
        if (tat <= now) tats.delete(limit.key);
        else tats.set(limit.key, tat);
      }
    },

    async acquire(semaphores: Semaphore[], leaseId: string, ttlMs: number, now: number): Promise<AcquireResult> {
      if (++acquires % SWEEP_EVERY === 0) for (const key of [...leases.keys()]) live(key, now);
      for (const [index, semaphore] of semaphores.entries()) {
        const held = live(semaphore.key, now);
        if (held !== undefined && !held.has(leaseId) && held.size >= semaphore.max) return { ok: false, error: { index } };
      }
      for (const semaphore of semaphores) {
        let held = leases.get(semaphore.key);
        if (held === undefined) {
          held = new Map();
          leases.set(semaphore.key, held);
        }
        held.set(leaseId, now + ttlMs);
      }
      return { ok: true, value: undefined };
    },

    async extend(keys: string[], leaseId: string, ttlMs: number, now: number): Promise<void> {
      for (const key of keys) {
        const held = live(key, now);
        if (held?.has(leaseId)) held.set(leaseId, now + ttlMs);
      }
    },

    async release(keys: string[], leaseId: string): Promise<void> {
      for (const key of keys) {
        const held = leases.get(key);
        if (held === undefined) continue;
        held.delete(leaseId);
        if (held.size === 0) leases.delete(key);
      }
    },

    async inFlight(key: string, now: number): Promise<number> {
      return live(key, now)?.size ?? 0;
    },

    async close(): Promise<void> {
      tats.clear();
      leases.clear();
    },
  };
}
