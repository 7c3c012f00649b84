import { describe, expect, it } from 'vitest';
import { concatBytes } from './concat-bytes';

describe('concatBytes', () => {
  it('joins the chunks in order into one array of exactly their length', () => {
    expect(concatBytes([new Uint8Array([1, 2]), new Uint8Array(0), new Uint8Array([3, 4, 5])])).toEqual(new Uint8Array([1, 2, 3, 4, 5]));
    expect(concatBytes([])).toEqual(new Uint8Array(0));
  });

  it('copies into a buffer of its own, even for one chunk that is a view into a larger buffer', () => {
    const pool = new Uint8Array([9, 9, 1, 2, 3, 9]);
    const view = pool.subarray(2, 5);
    const joined = concatBytes([view]);
    expect(joined).toEqual(new Uint8Array([1, 2, 3]));
    expect(joined.buffer).not.toBe(pool.buffer);
    expect(joined.byteOffset).toBe(0);
    expect(joined.buffer.byteLength).toBe(3);
    pool[2] = 7;
    expect(joined[0]).toBe(1);
  });
});
