import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeBase64 } from './encode-base64';

describe('encodeBase64', () => {
  it('agrees with btoa on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expect(encodeBase64(bytes)).toBe(btoa(String.fromCharCode(...bytes)));
      }),
      { numRuns: 500 },
    );
  });

  it('encodes the RFC 4648 vectors', () => {
    const encode = (text: string) => encodeBase64(new TextEncoder().encode(text));
    expect(['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'].map(encode)).toEqual(['', 'Zg==', 'Zm8=', 'Zm9v', 'Zm9vYg==', 'Zm9vYmE=', 'Zm9vYmFy']);
  });
});
