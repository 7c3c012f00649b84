import { describe, expect, it } from 'vitest';
import { readUsage } from './read-usage';

// The edges of what readUsage takes as a bill (docs/testing.md): the largest count it accepts,
// and details kept only when they are counts themselves.

describe('readUsage, at its bounds', () => {
  it('takes counts up to 1e12 tokens and refuses one more', () => {
    expect(readUsage({ prompt_tokens: 1e12, completion_tokens: 1e12 })).toStrictEqual({ prompt_tokens: 1e12, completion_tokens: 1e12, total_tokens: 2e12 });
    expect(readUsage({ prompt_tokens: 1e12 + 1, completion_tokens: 0 })).toBeUndefined();
    expect(readUsage({ prompt_tokens: 0, completion_tokens: 1e12 + 1 })).toBeUndefined();
  });

  it('keeps zero details and drops details that are not counts', () => {
    expect(
      readUsage({ prompt_tokens: 4, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } }),
    ).toStrictEqual({
      prompt_tokens: 4,
      completion_tokens: 2,
      total_tokens: 6,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(
      readUsage({
        prompt_tokens: 4,
        completion_tokens: 2,
        prompt_tokens_details: { cached_tokens: 1.5 },
        completion_tokens_details: { reasoning_tokens: '1' },
      }),
    ).toStrictEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    expect(readUsage({ prompt_tokens: 4, completion_tokens: 2, prompt_tokens_details: null, completion_tokens_details: {} })).toStrictEqual({
      prompt_tokens: 4,
      completion_tokens: 2,
      total_tokens: 6,
    });
  });
});
