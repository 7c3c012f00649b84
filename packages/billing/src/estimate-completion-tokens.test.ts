import { describe, expect, it } from 'vitest';
import { estimateCompletionTokens } from './estimate-completion-tokens';

describe('estimateCompletionTokens, at the edges of its character classes', () => {
  it('counts U+007F as ASCII and U+0080 as a token of its own', () => {
    expect(estimateCompletionTokens('abc\u007f')).toBe(1);
    expect(estimateCompletionTokens('abc\u0080')).toBe(1 + 1);
  });

  it('counts a surrogate pair as one code point at both ends of both surrogate ranges', () => {
    expect(estimateCompletionTokens('\ud800\udc00')).toBe(1); // U+10000
    expect(estimateCompletionTokens('\ud800\udfff')).toBe(1);
    expect(estimateCompletionTokens('\udbff\udc00')).toBe(1);
    expect(estimateCompletionTokens('\udbff\udfff')).toBe(1); // U+10FFFF
  });

  it('counts lone surrogates as a code point each and keeps the character after them', () => {
    expect(estimateCompletionTokens('\ud800a')).toBe(1 + 1);
    expect(estimateCompletionTokens('\ud7ff\udc00')).toBe(2);
    expect(estimateCompletionTokens('\udc00\udc00')).toBe(2);
    expect(estimateCompletionTokens('\ud800\ud800')).toBe(2);
    expect(estimateCompletionTokens('\ud800\ue000')).toBe(2);
    expect(estimateCompletionTokens('\ud800')).toBe(1);
    expect(estimateCompletionTokens('a\ud800')).toBe(1 + 1);
  });
});
