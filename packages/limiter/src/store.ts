import type { Result } from '@tollgate/core';

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

/** A rate check's refusal. */
export interface RateRefusal {
  /** The first limit that refused. */
  index: number;
  /** Milliseconds until the request would be admitted. */
  retryAfterMs: number;
}

/** The outcome of a rate check over several limits. */
export type RateResult = Result<undefined, RateRefusal>;

/** An in-flight slot's refusal. */
export interface AcquireRefusal {
  /** The first semaphore that was full. */
  index: number;
}

/** The outcome of taking an in-flight slot. */
export type AcquireResult = Result<undefined, AcquireRefusal>;

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
   * Takes back the one request `rate` counted on each of `limits` (a request admitted, then refused
   * by its in-flight slot, or whose admission came too late to be used): refused requests consume
   * nothing. Optional: a store without it keeps the count.
   */
  refund?(limits: RateLimit[], now: number): Promise<void>;
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
  /**
   * The store answers within the call, in this process (`memoryLimiter`): `createLimiter` arms no
   * deadline on it (`storeTimeoutMs` guards a store over the network). A store that wraps another
   * and answers later must not copy it.
   */
  readonly local?: boolean;
}
