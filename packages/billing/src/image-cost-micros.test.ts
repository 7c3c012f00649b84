import { describe, expect, it } from 'vitest';
import { imageCostMicros } from './image-cost-micros';

describe('imageCostMicros, at its limits', () => {
  it('charges exactly one credit when the price lands on it, and more above it', () => {
    expect(imageCostMicros({ micros_per_image: 4_000, micros_per_reference: 2_000 }, 3)).toBe(10_000);
    expect(imageCostMicros({ micros_per_image: 4_001, micros_per_reference: 2_000 }, 3)).toBe(10_001);
  });

  it('returns a cost of exactly Number.MAX_SAFE_INTEGER and refuses one micro more', () => {
    expect(imageCostMicros({ micros_per_image: Number.MAX_SAFE_INTEGER - 2, micros_per_reference: 1 }, 2)).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => imageCostMicros({ micros_per_image: Number.MAX_SAFE_INTEGER - 2, micros_per_reference: 1 }, 3)).toThrow(
      new RangeError('image cost exceeds the safe integer range'),
    );
  });
});
