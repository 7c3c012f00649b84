import { describe, expect, it } from 'vitest';
import { validateModelPrices } from './validate-model-prices';

// A configuration read from JSON may hold anything where a price belongs (docs/testing.md).
const withPrice = (type: 'chat' | 'image', price: unknown) => () => validateModelPrices([{ id: 'm', type, price } as never]);

describe('validateModelPrices, a price that is not an object', () => {
  it('names every field a chat or an image price needs', () => {
    expect(withPrice('chat', undefined)).toThrow(
      new Error('model "m": price is missing (a chat model needs prompt_micros_per_mtok, completion_micros_per_mtok, min_hold_micros)'),
    );
    expect(withPrice('image', undefined)).toThrow(new Error('model "m": price is missing (a image model needs micros_per_image, micros_per_reference)'));
  });

  it('refuses a null or a number as missing, not with a TypeError', () => {
    expect(withPrice('chat', null)).toThrow('model "m": price is missing');
    expect(withPrice('chat', 5)).toThrow('model "m": price is missing');
    expect(withPrice('image', 'free')).toThrow('model "m": price is missing');
  });
});
