import { describe, expect, it } from 'vitest';
import { readUsage } from './read-usage';

describe('readUsage', () => {
  it('keeps the spec fields of a well-formed usage and recomputes the total', () => {
    expect(
      readUsage({
        prompt_tokens: 5,
        completion_tokens: 3,
        total_tokens: 99,
        prompt_tokens_details: { cached_tokens: 2, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 1, audio_tokens: 0 },
      }),
    ).toEqual({
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
      prompt_tokens_details: { cached_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 1 },
    });
    expect(readUsage({ prompt_tokens: 0, completion_tokens: 0 })).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('refuses anything money must not be computed from', () => {
    for (const bad of [
      undefined,
      null,
      7,
      'usage',
      {},
      { prompt_tokens: 5 },
      { prompt_tokens: -5, completion_tokens: 3 },
      { prompt_tokens: 1.5, completion_tokens: 3 },
      { prompt_tokens: '5', completion_tokens: 3 },
      { prompt_tokens: 5, completion_tokens: 1e13 },
      { prompt_tokens: Number.NaN, completion_tokens: 1 },
    ]) {
      expect(readUsage(bad), JSON.stringify(bad)).toBeUndefined();
    }
    expect(readUsage({ prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: { cached_tokens: -1 } })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
    });
  });
});

describe('readUsage, cached tokens', () => {
  it('keeps a cached count up to the prompt and drops one above it (the prompt is then billed in full)', () => {
    expect(readUsage({ prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 5 } })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
      prompt_tokens_details: { cached_tokens: 5 },
    });
    expect(readUsage({ prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 6 } })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
    });
  });
});
