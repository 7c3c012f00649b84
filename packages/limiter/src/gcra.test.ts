import { describe, expect, it } from 'vitest';
import { currentTat, gcra } from './gcra';

const limit = { intervalMs: 1_000, burst: 3 };

describe('gcra, one step at a time', () => {
  it('admits an idle key and moves its TAT one interval past now', () => {
    expect(gcra(undefined, limit, 5_000)).toEqual({ tat: 6_000, waitMs: 0 });
    // A TAT in the past, or exactly now, is the same as no state.
    expect(gcra(4_000, limit, 5_000)).toEqual({ tat: 6_000, waitMs: 0 });
    expect(gcra(5_000, limit, 5_000)).toEqual({ tat: 6_000, waitMs: 0 });
  });

  it('admits while tat - now <= (burst - 1) x interval, from the stored TAT', () => {
    expect(gcra(7_000, limit, 5_000)).toEqual({ tat: 8_000, waitMs: 0 });
  });

  it('refuses past the burst, says how long to wait, and leaves the stored TAT as it was', () => {
    expect(gcra(8_000, limit, 5_000)).toEqual({ tat: 8_000, waitMs: 1_000 });
    expect(gcra(7_001, limit, 5_000)).toEqual({ tat: 7_001, waitMs: 1 });
  });

  it('reads a TAT further ahead than burst x interval as that far ahead (currentTat)', () => {
    expect(currentTat(undefined, limit, 5_000)).toBe(5_000);
    expect(currentTat(4_000, limit, 5_000)).toBe(5_000);
    expect(currentTat(8_000, limit, 5_000)).toBe(8_000);
    expect(currentTat(3_605_000, limit, 5_000)).toBe(8_000);
    expect(gcra(3_605_000, limit, 5_000)).toEqual({ tat: 8_000, waitMs: 1_000 });
  });
});
