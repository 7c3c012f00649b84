import { describe, expect, it } from 'vitest';
import { rateLimitFor } from './rate-limit-for';

describe('rateLimitFor', () => {
  it('paces perMinute / 60 a second with a burst of 1 + a tenth of perMinute, rounded down', () => {
    expect(rateLimitFor(60)).toEqual({ intervalMs: 1_000, burst: 7 });
    expect(rateLimitFor(30)).toEqual({ intervalMs: 2_000, burst: 4 });
    expect(rateLimitFor(9)).toEqual({ intervalMs: 60_000 / 9, burst: 1 });
  });

  it('refuses a figure that is not a positive number', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => rateLimitFor(bad), String(bad)).toThrow(new RangeError(`a per-minute limit must be a positive number, got ${bad}`));
    }
  });
});
