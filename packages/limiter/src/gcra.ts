/** The pace and burst of one GCRA limit. */
export interface GcraLimit {
  /** Milliseconds per request at the even pace. */
  intervalMs: number;
  /** Requests an idle key may send at once (>= 1). */
  burst: number;
}

/** The outcome of one GCRA check: the TAT to store if admitted, or how long to wait. */
export interface GcraStep {
  /** The theoretical arrival time to store when the request is admitted (unix ms); when refused, the TAT as read ({@link currentTat}). */
  tat: number;
  /** 0 when admitted; otherwise milliseconds until the request would be admitted. */
  waitMs: number;
}

/**
 * The TAT a stored one stands for at `now`: none, or one in the past, is `now`; one further ahead
 * than `burst x interval`, which no admission leaves (a clock stepped back, another instance's
 * clock ahead), is that far ahead: a full burst to wait out, not hours. A store keeps this value
 * when it is less than what it holds, on a refusal too, so the wait runs down as time passes.
 *
 * @example
 * currentTat(9_999_999, { intervalMs: 1000, burst: 7 }, 0); // 7000
 */
export function currentTat(stored: number | undefined, limit: GcraLimit, now: number): number {
  if (stored === undefined || stored < now) return now;
  return Math.min(stored, now + limit.burst * limit.intervalMs);
}

/**
 * One step of the generic cell rate algorithm. A key's state is one number, its theoretical
 * arrival time (TAT); a TAT in the past is the same as no state at all, which is what lets stores
 * forget idle keys. A request is admitted when `tat - now <= (burst - 1) * interval`, so an idle
 * key sends `burst` requests at once and then one per `interval`. The TAT is read through
 * {@link currentTat}; a refusal answers it as read.
 *
 * @example
 * gcra(undefined, { intervalMs: 1000, burst: 7 }, 0); // { tat: 1000, waitMs: 0 }
 */
export function gcra(stored: number | undefined, limit: GcraLimit, now: number): GcraStep {
  const tat = currentTat(stored, limit, now);
  const waitMs = tat - (limit.burst - 1) * limit.intervalMs - now;
  if (waitMs > 0) return { tat, waitMs };
  return { tat: tat + limit.intervalMs, waitMs: 0 };
}
