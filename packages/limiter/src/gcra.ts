/** The pace and burst of one GCRA limit. */
export interface GcraLimit {
  /** Milliseconds per request at the even pace. */
  intervalMs: number;
  /** Requests an idle key may send at once (>= 1). */
  burst: number;
}

/** The outcome of one GCRA check: the TAT to store if admitted, or how long to wait. */
export interface GcraStep {
  /** The theoretical arrival time to store when the request is admitted (unix ms). */
  tat: number;
  /** 0 when admitted; otherwise milliseconds until the request would be admitted. */
  waitMs: number;
}

/**
 * One step of the generic cell rate algorithm. A key's state is one number, its theoretical
 * arrival time (TAT); a TAT in the past is the same as no state at all, which is what lets stores
 * forget idle keys. A request is admitted when `tat - now <= (burst - 1) * interval`, so an idle
 * key sends `burst` requests at once and then one per `interval`.
 *
 * @example
 * gcra(undefined, { intervalMs: 1000, burst: 7 }, 0); // { tat: 1000, waitMs: 0 }
 */
export function gcra(stored: number | undefined, limit: GcraLimit, now: number): GcraStep {
  const tat = stored === undefined || stored < now ? now : stored;
  const waitMs = tat - (limit.burst - 1) * limit.intervalMs - now;
  if (waitMs > 0) return { tat: stored ?? now, waitMs };
  return { tat: tat + limit.intervalMs, waitMs: 0 };
}
