import { describe, expect, it } from 'vitest';
import type { ChatPrice } from '@tollgate/core';
import { chatCostMicros } from './chat-cost-micros';

// Boundaries of chatCostMicros's two paths, each found by a mutant that survived pricing.test.ts
// (docs/testing.md): the fast path must multiply, the BigInt path must add the completion part,
// and the safe-integer limit itself is a cost, not an overflow.

const BIG_TOKENS = 2 ** 40;
const BIG_PRICE = 2 ** 20 + 1;

describe('chatCostMicros, exact at the edges', () => {
  it('multiplies tokens by price on the fast path, on both sides', () => {
    // Token counts that are multiples of the price: a division in place of a product is an integer too.
    const price: ChatPrice = { prompt_micros_per_mtok: 1_000, completion_micros_per_mtok: 3_000, min_hold_micros: 0 };
    expect(chatCostMicros(price, { prompt_tokens: 5_000, completion_tokens: 6_000 })).toBe(5 + 18);
    expect(chatCostMicros(price, { prompt_tokens: 5_000, completion_tokens: 0 })).toBe(5);
    expect(chatCostMicros(price, { prompt_tokens: 0, completion_tokens: 6_000 })).toBe(18);
  });

  it('adds a completion part large enough to move the rounded cost on the BigInt path', () => {
    const price: ChatPrice = { prompt_micros_per_mtok: BIG_PRICE, completion_micros_per_mtok: 7, min_hold_micros: 0 };
    // 2^40 x (2^20 + 1) = 1,152,922,604,118,474,752; + 7,000,000 -> ceil / 1e6 = 1,152,922,604,126.
    expect(chatCostMicros(price, { prompt_tokens: BIG_TOKENS, completion_tokens: 1_000_000 })).toBe(1_152_922_604_126);
    expect(chatCostMicros(price, { prompt_tokens: BIG_TOKENS, completion_tokens: 0 })).toBe(1_152_922_604_119);
  });

  it('takes the BigInt path when only the sum passes 2^53', () => {
    // Both parts are safe integers; their sum 9,007,200,000,000,001 is not, and as a double it
    // rounds to 9,007,200,000,000,000, which would drop the last micro of the ceil.
    const price: ChatPrice = { prompt_micros_per_mtok: Number.MAX_SAFE_INTEGER, completion_micros_per_mtok: 745_259_010, min_hold_micros: 0 };
    expect(chatCostMicros(price, { prompt_tokens: 1, completion_tokens: 1 })).toBe(9_007_200_001);
  });

  it('returns a cost of exactly Number.MAX_SAFE_INTEGER and refuses one micro more', () => {
    const price: ChatPrice = { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 1, min_hold_micros: 0 };
    expect(chatCostMicros(price, { prompt_tokens: Number.MAX_SAFE_INTEGER, completion_tokens: 0 })).toBe(Number.MAX_SAFE_INTEGER);
    expect(() => chatCostMicros(price, { prompt_tokens: Number.MAX_SAFE_INTEGER, completion_tokens: 1 })).toThrow(
      new RangeError('chat cost exceeds the safe integer range'),
    );
  });
});
