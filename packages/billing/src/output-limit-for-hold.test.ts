import { describe, expect, it } from 'vitest';
import type { ChatPrice } from '@tollgate/core';
import { outputLimitForHold } from './output-limit-for-hold';

const price: ChatPrice = { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 1_000 };

describe('outputLimitForHold, at the ends of [1, wanted]', () => {
  it('grants a wanted limit of exactly 1 when it fits', () => {
    expect(outputLimitForHold(price, 1_000, 1_350, 1)).toBe(1);
    expect(outputLimitForHold({ ...price, completion_micros_per_mtok: 0 }, 1_000, 1_350, 1)).toBe(1);
  });

  it('grants nothing when the wanted limit is below 1, whatever the hold', () => {
    expect(outputLimitForHold(price, 1_000, 10_000_000, -1)).toBe(0);
    expect(outputLimitForHold({ ...price, completion_micros_per_mtok: 0 }, 1_000, 10_000_000, -1)).toBe(0);
  });
});
