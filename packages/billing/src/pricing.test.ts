import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatPrice } from '@tollgate/core';
import { chatCostMicros } from './chat-cost-micros';
import { chatHoldMicros } from './chat-hold-micros';
import { estimateCompletionTokens } from './estimate-completion-tokens';
import { imageCostMicros } from './image-cost-micros';
import { outputLimitForHold } from './output-limit-for-hold';

const price: ChatPrice = { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 1_000 };
const BIG_TOKENS = 2 ** 40;
const BIG_PRICE = 2 ** 20 + 1;
const ceilBig = (value: bigint) => Number((value + 999_999n) / 1_000_000n);

describe('chatHoldMicros', () => {
  it('rounds each part up and never holds below min_hold_micros', () => {
    expect(chatHoldMicros(price, 1_000, 2_000)).toBe(150 + 1_200);
    expect(chatHoldMicros(price, 1_001, 2_001)).toBe(151 + 1_201);
    expect(chatHoldMicros(price, 1, 1)).toBe(1_000);
    expect(chatHoldMicros({ ...price, min_hold_micros: 0 }, 1, 1)).toBe(2);
    expect(chatHoldMicros({ ...price, min_hold_micros: 0 }, 0, 0)).toBe(0);
  });

  it('is exact past 2^53', () => {
    const big: ChatPrice = { prompt_micros_per_mtok: BIG_PRICE, completion_micros_per_mtok: BIG_PRICE, min_hold_micros: 0 };
    const part = ceilBig(BigInt(BIG_TOKENS) * BigInt(BIG_PRICE));
    expect(BIG_TOKENS * BIG_PRICE).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
    expect(chatHoldMicros(big, BIG_TOKENS, BIG_TOKENS)).toBe(2 * part);
    expect(part).toBe(1_152_922_604_119);
  });
});

describe('outputLimitForHold', () => {
  it('finds the largest output limit that fits the hold', () => {
    expect(outputLimitForHold(price, 1_000, 1_350, 2_000)).toBe(2_000);
    expect(outputLimitForHold(price, 1_000, 1_349, 2_000)).toBe(1_998);
    expect(chatHoldMicros(price, 1_000, 1_998)).toBe(1_349);
    expect(chatHoldMicros(price, 1_000, 1_999)).toBe(1_350);
    expect(outputLimitForHold(price, 1_000, 1_000, 2_000)).toBe(1_416);
    expect(outputLimitForHold(price, 1_000, 999, 2_000)).toBe(0);
    expect(outputLimitForHold(price, 1_000, 10_000_000, 0)).toBe(0);
    const flat: ChatPrice = { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 1_000_000, min_hold_micros: 0 };
    expect(outputLimitForHold(flat, 10, 10, 50)).toBe(0);
    expect(outputLimitForHold(flat, 10, 11, 50)).toBe(1);
    expect(outputLimitForHold(flat, 10, 9, 50)).toBe(0);
    expect(outputLimitForHold({ ...flat, completion_micros_per_mtok: 0 }, 10, 10, 50)).toBe(50);
  });

  it('is exact when remaining x 1e6 passes 2^53', () => {
    const cheap: ChatPrice = { prompt_micros_per_mtok: 0, completion_micros_per_mtok: 3, min_hold_micros: 0 };
    expect(outputLimitForHold(cheap, 0, 10_000_000_000, Number.MAX_SAFE_INTEGER)).toBe(Number((10_000_000_000n * 1_000_000n) / 3n));
    expect(outputLimitForHold(cheap, 0, 10_000_000_000, 5)).toBe(5);
  });

  it('agrees with chatHoldMicros on every input', () => {
    fc.assert(
      fc.property(
        fc.record({ prompt_micros_per_mtok: fc.nat(20_000_000), completion_micros_per_mtok: fc.nat(80_000_000), min_hold_micros: fc.nat(50_000) }),
        fc.nat(2_000_000),
        fc.nat(5_000_000),
        fc.integer({ min: 1, max: 200_000 }),
        (p, prompt, held, wanted) => {
          const limit = outputLimitForHold(p, prompt, held, wanted);
          if (limit === 0) return chatHoldMicros(p, prompt, 1) > held;
          return limit <= wanted && chatHoldMicros(p, prompt, limit) <= held && (limit === wanted || chatHoldMicros(p, prompt, limit + 1) > held);
        },
      ),
    );
  });
});

describe('chatCostMicros', () => {
  it('rounds the sum up once', () => {
    expect(chatCostMicros(price, { prompt_tokens: 1_000, completion_tokens: 2_000 })).toBe(1_350);
    expect(chatCostMicros(price, { prompt_tokens: 1, completion_tokens: 1 })).toBe(1);
    expect(chatCostMicros(price, { prompt_tokens: 3, completion_tokens: 1 })).toBe(2);
    expect(chatCostMicros(price, { prompt_tokens: 0, completion_tokens: 0 })).toBe(0);
    expect(chatCostMicros(price, { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 })).toBe(750_000);
  });

  it('is exact past 2^53 and refuses a cost beyond safe integers', () => {
    const big: ChatPrice = { prompt_micros_per_mtok: BIG_PRICE, completion_micros_per_mtok: 7, min_hold_micros: 0 };
    expect(chatCostMicros(big, { prompt_tokens: BIG_TOKENS, completion_tokens: 3 })).toBe(ceilBig(BigInt(BIG_TOKENS) * BigInt(BIG_PRICE) + 21n));
    expect(chatCostMicros(big, { prompt_tokens: BIG_TOKENS, completion_tokens: 3 })).toBe(1_152_922_604_119);
    const huge: ChatPrice = { prompt_micros_per_mtok: Number.MAX_SAFE_INTEGER, completion_micros_per_mtok: 0, min_hold_micros: 0 };
    expect(() => chatCostMicros(huge, { prompt_tokens: 2_000_000, completion_tokens: 0 })).toThrow(RangeError);
  });
});

describe('imageCostMicros', () => {
  it('adds references to every image and charges at least a credit', () => {
    expect(imageCostMicros({ micros_per_image: 40_000, micros_per_reference: 5_000 }, 0)).toBe(40_000);
    expect(imageCostMicros({ micros_per_image: 40_000, micros_per_reference: 5_000 }, 2)).toBe(50_000);
    expect(imageCostMicros({ micros_per_image: 1_000, micros_per_reference: 0 }, 3)).toBe(10_000);
    expect(imageCostMicros({ micros_per_image: 0, micros_per_reference: 3_000 }, 3)).toBe(10_000);
    expect(imageCostMicros({ micros_per_image: 0, micros_per_reference: 3_000 }, 4)).toBe(12_000);
  });
});

describe('estimateCompletionTokens', () => {
  it('counts four ASCII characters a token and a token per other code point', () => {
    expect(estimateCompletionTokens('')).toBe(0);
    expect(estimateCompletionTokens('a')).toBe(1);
    expect(estimateCompletionTokens('abcd')).toBe(1);
    expect(estimateCompletionTokens('abcde')).toBe(2);
    expect(estimateCompletionTokens('Hello, world!')).toBe(4);
    expect(estimateCompletionTokens('你好')).toBe(2);
    expect(estimateCompletionTokens('hi 😀')).toBe(2);
    expect(estimateCompletionTokens('café')).toBe(2);
  });
});
