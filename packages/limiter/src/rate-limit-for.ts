import type { GcraLimit } from './gcra';

/**
 * The GCRA limit of a per-minute figure, as the spec's Limits define it: an even pace of
 * `perMinute / 60` per second and a burst of 1 + a tenth of the per-minute figure (rounded down).
 * The same formula serves the fixed per-endpoint limits (30/min -> burst 4, 60/min -> burst 7).
 *
 * @example
 * rateLimitFor(60); // { intervalMs: 1000, burst: 7 }
 */
export function rateLimitFor(perMinute: number): GcraLimit {
  if (!Number.isFinite(perMinute) || perMinute <= 0) {
    throw new RangeError(`a per-minute limit must be a positive number, got ${perMinute}`);
  }
  return { intervalMs: 60_000 / perMinute, burst: 1 + Math.floor(perMinute / 10) };
}
