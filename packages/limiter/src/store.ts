/**
 * One GCRA limit: `interval` ms between requests at the even pace, `burst` requests an idle key
 * may send at once.
 */
export interface RateLimit {
  /** Store key, e.g. `rate:acc_1:plan`. */
  key: string;
  /** Milliseconds per request at the even pace (60,000 / requests a minute). */
  intervalMs: number;
  /** Requests an idle key may send at once (>= 1). */
  burst: number;
}

/** The outcome of a rate check over several limits. */
export type RateResult =
  | { ok: true }
  /** `index` is the first limit that refused; `retryAfterMs` is when the request would be admitted. */
  | { ok: false; index: number; retryAfterMs: number };

/** The outcome of taking an in-flight slot. */
export type AcquireResult = { ok: true } | { ok: false; index: number };

/** One in-flight semaphore: at most `max` live leases under `key`. */
export interface Semaphore {
  key: string;
  max: number;
}

/**
 * Where limits keep their state. Every method is atomic over all the keys it names: a request
 * that one limit refuses consumes nothing from the others.
 */
export interface LimiterStore {
  /** GCRA over several limits at `now` (unix ms): all admit and are consumed, or none is. */
  rate(limits: RateLimit[], now: number): Promise<RateResult>;
  /**
   * Takes a lease `leaseId` in each semaphore, all or none. A lease lives until released or
   * until `now + ttlMs`, so a crashed holder's slots come back.
   */
  acquire(semaphores: Semaphore[], leaseId: string, ttlMs: number, now: number): Promise<AcquireResult>;
  /** Extends a live lease to `now + ttlMs`. */
  extend(keys: string[], leaseId: string, ttlMs: number, now: number): Promise<void>;
  /** Gives a lease back. Idempotent. */
  release(keys: string[], leaseId: string): Promise<void>;
  /** Live leases under a key (for tests and metrics). */
  inFlight(key: string, now: number): Promise<number>;
  /** Frees connections and timers. */
  close?(): Promise<void>;
}
