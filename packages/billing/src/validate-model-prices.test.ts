import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '@tollgate/core';
import { validateModelPrices } from './validate-model-prices';

const chat: ModelConfig = { id: 'fast', type: 'chat', price: { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 0 } };
const image: ModelConfig = { id: 'pix', type: 'image', price: { micros_per_image: 40_000, micros_per_reference: 0 } };
const search: ModelConfig = { id: 'web', type: 'search', included: { from: 'plus', quota: 'web_calls' } };

describe('validateModelPrices', () => {
  it('accepts complete integer prices', () => {
    expect(validateModelPrices([chat, image, search, { ...search, id: 'web2', micros_per_call: 500 }])).toBeUndefined();
  });

  it('refuses a chat or image model without a price', () => {
    expect(() => validateModelPrices([{ id: 'fast', type: 'chat' }])).toThrow('model "fast": price is missing');
    expect(() => validateModelPrices([chat, { id: 'pix', type: 'image' }])).toThrow('model "pix": price is missing');
  });

  it('names the model and the field of a malformed price', () => {
    const bad =
      (price: Record<string, unknown>, type: 'chat' | 'image' = 'chat') =>
      () =>
        validateModelPrices([{ id: 'm', type, price: price as never }]);
    expect(bad({ prompt_micros_per_mtok: 1, completion_micros_per_mtok: 1 })).toThrow(
      'model "m": price.min_hold_micros must be a non-negative safe integer, got undefined',
    );
    expect(bad({ prompt_micros_per_mtok: 1.5, completion_micros_per_mtok: 1, min_hold_micros: 0 })).toThrow(
      'model "m": price.prompt_micros_per_mtok must be a non-negative safe integer, got 1.5',
    );
    expect(bad({ prompt_micros_per_mtok: 1, completion_micros_per_mtok: -1, min_hold_micros: 0 })).toThrow('price.completion_micros_per_mtok');
    expect(bad({ prompt_micros_per_mtok: '1', completion_micros_per_mtok: 1, min_hold_micros: 0 })).toThrow(
      'price.prompt_micros_per_mtok must be a non-negative safe integer, got "1"',
    );
    expect(bad({ prompt_micros_per_mtok: 2 ** 53, completion_micros_per_mtok: 1, min_hold_micros: 0 })).toThrow('price.prompt_micros_per_mtok');
    // An image price on a chat model is missing the chat fields.
    expect(bad({ micros_per_image: 1, micros_per_reference: 1 })).toThrow('price.prompt_micros_per_mtok');
    expect(bad({ micros_per_image: 1 }, 'image')).toThrow('model "m": price.micros_per_reference must be a non-negative safe integer, got undefined');
  });

  it('checks micros_per_call and image_token_bound when set', () => {
    expect(() => validateModelPrices([{ ...search, micros_per_call: -3 }])).toThrow('model "web": micros_per_call must be a non-negative safe integer, got -3');
    expect(() => validateModelPrices([{ ...chat, image_token_bound: 0.5 }])).toThrow('model "fast": image_token_bound');
  });

  it('takes a cached-prompt price that is a non-negative safe integer at most the prompt price', () => {
    const price = { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 0 };
    expect(validateModelPrices([{ ...chat, price: { ...price, cached_prompt_micros_per_mtok: 75_000 } }])).toBeUndefined();
    expect(validateModelPrices([{ ...chat, price: { ...price, cached_prompt_micros_per_mtok: 150_000 } }])).toBeUndefined();
    expect(validateModelPrices([{ ...chat, price: { ...price, cached_prompt_micros_per_mtok: 0 } }])).toBeUndefined();
    const bad = (cached: unknown) => () => validateModelPrices([{ ...chat, price: { ...price, cached_prompt_micros_per_mtok: cached as never } }]);
    // Above the prompt price the hold (every prompt token at the prompt price) would not be the most a request costs.
    expect(bad(150_001)).toThrow('model "fast": price.cached_prompt_micros_per_mtok (150001) must not exceed price.prompt_micros_per_mtok (150000)');
    expect(bad(-1)).toThrow('model "fast": price.cached_prompt_micros_per_mtok must be a non-negative safe integer, got -1');
    expect(bad(0.5)).toThrow('price.cached_prompt_micros_per_mtok must be a non-negative safe integer, got 0.5');
    expect(bad('75000')).toThrow('price.cached_prompt_micros_per_mtok must be a non-negative safe integer, got "75000"');
    expect(bad(null)).toThrow('price.cached_prompt_micros_per_mtok must be a non-negative safe integer, got null');
  });
});
