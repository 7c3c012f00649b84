import { describe, expect, it } from 'vitest';
import { createCompletionTokenCounter } from './completion-token-counter';
import { estimateCompletionTokens } from './estimate-completion-tokens';

describe('createCompletionTokenCounter', () => {
  it('counts text that grows exactly as estimateCompletionTokens counts it whole, whatever the cuts', () => {
    const text = 'Hello, wörld! 你好 😀 tail 👍🏽 end';
    for (let cut = 0; cut <= text.length; cut++) {
      for (let second = cut; second <= text.length; second++) {
        const counter = createCompletionTokenCounter();
        counter.update(text.slice(0, cut));
        expect(counter.tokens).toBe(estimateCompletionTokens(text.slice(0, cut)));
        counter.update(text.slice(0, second));
        counter.update(text.slice(0, second)); // nothing new: counts nothing
        counter.update(text);
        expect(counter.tokens).toBe(estimateCompletionTokens(text));
      }
    }
  });

  it('starts at 0 and rounds ASCII up per 4 characters', () => {
    const counter = createCompletionTokenCounter();
    expect(counter.tokens).toBe(0);
    counter.update('a');
    expect(counter.tokens).toBe(1);
    counter.update('abcd');
    expect(counter.tokens).toBe(1);
    counter.update('abcde');
    expect(counter.tokens).toBe(2);
  });
});
