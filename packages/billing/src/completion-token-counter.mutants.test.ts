import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCompletionTokenCounter } from './completion-token-counter';
import { estimateCompletionTokens } from './estimate-completion-tokens';

// A crash checkpoint charges what the counter says a stream delivered, and a stream that stops
// early is charged estimateCompletionTokens of the same text: the two must agree on every text,
// at every cut, or a crash-cut stream would pay a different price from a stream cut by its client.
// The code units at the edges of each rule: ASCII's last and the first non-ASCII, the edges of
// the high (D800-DBFF) and low (DC00-DFFF) surrogate ranges, and ordinary letters.
const EDGES = ['a', '\u007f', '\u0080', 'é', '\ud7ff', '\ud800', '\udbff', '\udc00', '\udfff', '\ue000', '你'];

function counted(parts: string[]): number {
  const counter = createCompletionTokenCounter();
  let text = '';
  for (const part of parts) {
    text += part;
    counter.update(text);
  }
  return counter.tokens;
}

describe('createCompletionTokenCounter at the edges of the estimate', () => {
  it('counts each non-ASCII code point once, U+0080 included, and four ASCII characters as one token', () => {
    expect(counted(['\u007f\u007f\u007f\u007f'])).toBe(1);
    expect(counted(['\u0080\u0080\u0080\u0080'])).toBe(4);
  });

  it('counts a surrogate pair once, at both ends of both ranges, whole or cut between its halves', () => {
    for (const pair of ['\ud800\udc00', '\ud800\udfff', '\udbff\udc00', '\udbff\udfff']) {
      expect(counted([pair])).toBe(1);
      expect(counted([pair.slice(0, 1), pair.slice(1)])).toBe(1);
    }
  });

  it('counts lone surrogates, and what follows a high surrogate that is not a low one, as code points of their own', () => {
    expect(counted(['\udc00'])).toBe(1); // a low surrogate first: nothing is pending yet
    expect(counted(['a\udc00'])).toBe(2);
    expect(counted(['é\udc00'])).toBe(2); // only a high surrogate pairs with a following low one
    expect(counted(['\ud7ff\udc00'])).toBe(2);
    expect(counted(['\ud800', 'a'])).toBe(2);
    expect(counted(['\ud800\ud800\udc00'])).toBe(2);
    expect(counted(['\ud800\udc00', '\udc00'])).toBe(2); // a pair closes: the next low surrogate is lone
    expect(counted(['\ue000\udc00'])).toBe(2);
  });

  it('agrees with estimateCompletionTokens on every text of edge characters, however it grows', () => {
    const pieces = fc.array(
      fc.array(fc.constantFrom(...EDGES), { maxLength: 6 }).map((chars) => chars.join('')),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(pieces, (parts) => {
        expect(counted(parts)).toBe(estimateCompletionTokens(parts.join('')));
      }),
      { numRuns: 500 },
    );
  });
});
