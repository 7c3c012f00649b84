import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8ByteLength } from './utf8-byte-length';

describe('utf8ByteLength', () => {
  it('counts 1 to 4 bytes per code point, a lone surrogate as 3 (U+FFFD)', () => {
    expect(utf8ByteLength('')).toBe(0);
    expect(utf8ByteLength('aé你😀')).toBe(1 + 2 + 3 + 4);
    expect(utf8ByteLength('\ud800x')).toBe(3 + 1);
    expect(utf8ByteLength('a\udc00b')).toBe(1 + 3 + 1);
    expect(utf8ByteLength('\ud800\ud800')).toBe(6);
    expect(utf8ByteLength('x'.repeat(8001))).toBe(8001);
  });

  it('agrees with TextEncoder on any string, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 64 }), (text) => utf8ByteLength(text) === new TextEncoder().encode(text).length),
      { numRuns: 300 },
    );
  });
});
