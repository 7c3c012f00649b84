import { describe, expect, it } from 'vitest';
import { createObfuscator } from './create-obfuscator';

/** A seeded xorshift32 byte source, so the distribution check cannot flake. */
function seeded(seed: number): (bytes: Uint8Array) => void {
  let state = seed;
  return (bytes) => {
    for (let i = 0; i < bytes.length; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      bytes[i] = state >>> 24;
    }
  };
}

describe('createObfuscator', () => {
  it('makes URL-safe values of 16 to 64 characters from the system source', () => {
    const obfuscation = createObfuscator();
    for (let i = 0; i < 1000; i++) expect(obfuscation()).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
  });

  it('makes 16 to 64 URL-safe characters, every length and character reachable, lengths uniform', () => {
    const obfuscation = createObfuscator({ random: seeded(0x9e3779b9) });
    const lengths = new Map<number, number>();
    const characters = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const value = obfuscation();
      expect(value).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
      lengths.set(value.length, (lengths.get(value.length) ?? 0) + 1);
      for (const character of value) characters.add(character);
    }
    expect([...lengths.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: 49 }, (_, i) => 16 + i));
    expect(characters.size).toBe(64);
    // Uniform: each length expects 20,000 / 49 ~ 408; five standard deviations either side.
    for (const count of lengths.values()) {
      expect(count).toBeGreaterThan(308);
      expect(count).toBeLessThan(508);
    }
  });

  it('draws from a pooled buffer: one random call per 4 KiB, not per value', () => {
    let calls = 0;
    const obfuscation = createObfuscator({
      random: (bytes) => {
        calls++;
        crypto.getRandomValues(bytes);
      },
    });
    for (let i = 0; i < 100; i++) obfuscation();
    // 100 values use at most 100 x 65 bytes (plus rare redraws): two or three pool fills.
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(3);
  });

  it('is deterministic under an injected source and redraws biased length bytes', () => {
    const obfuscation = createObfuscator({
      random: (bytes) => {
        bytes.fill(0);
        bytes[0] = 250; // >= 245: redrawn
        bytes[1] = 48; // length 16 + 48 = 64
        bytes[2] = 63; // '_'
      },
    });
    expect(obfuscation()).toBe(`_${'A'.repeat(63)}`);
  });

  it('gives exactly the values of drawing one byte per character, across pool refills', () => {
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // The reference: the obvious byte-at-a-time reading of the same source.
    const source = seeded(0x2545f491);
    const pool = new Uint8Array(4096);
    let offset = 4096;
    const next = () => {
      if (offset >= 4096) {
        source(pool);
        offset = 0;
      }
      return pool[offset++]!;
    };
    const reference = () => {
      let byte = next();
      while (byte >= 245) byte = next();
      let out = '';
      for (let i = 16 + (byte % 49); i > 0; i--) out += ALPHABET[next() & 63];
      return out;
    };
    const obfuscation = createObfuscator({ random: seeded(0x2545f491) });
    // 5,000 values use about 200 KiB of bytes: some 50 refills, many inside a value.
    for (let i = 0; i < 5_000; i++) expect(obfuscation()).toBe(reference());
  });
});
