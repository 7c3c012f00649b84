import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateKey } from './generate-key';

// Rejection sampling is what makes every key character equally likely: 256 is not a multiple of
// 62, so a byte of 248..255 taken modulo 62 would make 'A'..'H' more likely than the rest.
describe('generateKey rejection sampling', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('drops every byte of 248 and above, 248 itself included, and takes the next buffer', () => {
    let call = 0;
    vi.spyOn(crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      if (!(array instanceof Uint8Array)) throw new TypeError('generateKey asks for bytes');
      call++;
      // First buffer: only bytes the rule drops (248..255); second: 62 + i, which is 'A' + i.
      for (let i = 0; i < array.length; i++) array[i] = call === 1 ? 248 + (i % 8) : 62 + (i % 62);
      return array;
    });
    const key = generateKey();
    expect(call).toBe(2);
    expect(key).toBe('sk_svc_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq');
  });

  it('keeps 247, the largest byte that maps uniformly', () => {
    vi.spyOn(crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(array: T): T => {
      if (!(array instanceof Uint8Array)) throw new TypeError('generateKey asks for bytes');
      array.fill(247); // 247 % 62 = 61: '9'
      return array;
    });
    expect(generateKey()).toBe(`sk_svc_${'9'.repeat(43)}`);
  });
});
