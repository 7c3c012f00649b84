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

describe('chatCostMicros, cached prompt tokens', () => {
  // 3 micros a prompt token, 1.25 a cached one (a 2.4 x discount, not a divisor), 7 a completion token.
  const cachedPrice: ChatPrice = {
    prompt_micros_per_mtok: 3_000_000,
    cached_prompt_micros_per_mtok: 1_250_000,
    completion_micros_per_mtok: 7_000_000,
    min_hold_micros: 0,
  };

  it('bills cached tokens, a subset of the prompt, at the cached price and rounds the sum up once', () => {
    // (10 - 4) x 3 + 4 x 1.25 + 2 x 7 = 18 + 5 + 14 = 37.
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 4 })).toBe(37);
    // (10 - 3) x 3 + 3 x 1.25 + 0 = 24.75 -> 25: one ceil over the sum, not per part.
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 0, cached_tokens: 3 })).toBe(25);
    // 1 x 1.25 + 1 x 1.25 = 2.5 -> 3, where ceil per part would give 4.
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 2, completion_tokens: 0, cached_tokens: 2 })).toBe(3);
    // Every prompt token cached: 10 x 1.25 + 1 x 7.
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 1, cached_tokens: 10 })).toBe(13 + 7);
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 1, cached_tokens: 0 })).toBe(30 + 7);
  });

  it('bills cached tokens at the prompt price when the model sets no cached price', () => {
    const price: ChatPrice = { prompt_micros_per_mtok: 3_000_000, completion_micros_per_mtok: 7_000_000, min_hold_micros: 0 };
    expect(chatCostMicros(price, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 4 })).toBe(30 + 14);
  });

  it('bills a cached price of zero as free cached tokens', () => {
    const price: ChatPrice = { ...cachedPrice, cached_prompt_micros_per_mtok: 0 };
    expect(chatCostMicros(price, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 4 })).toBe(18 + 14);
  });

  it('ignores a cached count that is not a whole number within the prompt: the prompt price for all', () => {
    const full = 30 + 14;
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 11 })).toBe(full);
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: -1 })).toBe(full);
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 2.5 })).toBe(full);
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: Number.NaN })).toBe(full);
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2 })).toBe(full);
    // Exactly the prompt is within it.
    expect(chatCostMicros(cachedPrice, { prompt_tokens: 10, completion_tokens: 2, cached_tokens: 10 })).toBe(13 + 14);
  });

  it('is exact past 2^53 with cached tokens, on the BigInt path', () => {
    const price: ChatPrice = { prompt_micros_per_mtok: BIG_PRICE, cached_prompt_micros_per_mtok: 3, completion_micros_per_mtok: 7, min_hold_micros: 0 };
    // (2^40 - 2^20) x (2^20 + 1) + 2^20 x 3 + 1,000,000 x 7, then ceil / 1e6.
    const big = (BigInt(BIG_TOKENS) - 1_048_576n) * BigInt(BIG_PRICE) + 1_048_576n * 3n + 7_000_000n;
    expect(chatCostMicros(price, { prompt_tokens: BIG_TOKENS, completion_tokens: 1_000_000, cached_tokens: 2 ** 20 })).toBe(
      Number((big + 999_999n) / 1_000_000n),
    );
    expect(Number((big + 999_999n) / 1_000_000n)).toBe(1_152_921_504_616);
  });

  it('takes the BigInt path when only the cached part passes 2^53', () => {
    // The cached product alone is past 2^53 (the prompt price is larger still, so the price is valid):
    // 3 x 3,002,400,000,666,667 = 9,007,200,002,000,001, which as a double is ...000 and would lose
    // the last micro of the ceil.
    const price: ChatPrice = {
      prompt_micros_per_mtok: Number.MAX_SAFE_INTEGER,
      cached_prompt_micros_per_mtok: 3_002_400_000_666_667,
      completion_micros_per_mtok: 0,
      min_hold_micros: 0,
    };
    expect(chatCostMicros(price, { prompt_tokens: 3, completion_tokens: 0, cached_tokens: 3 })).toBe(9_007_200_003);
  });
});
