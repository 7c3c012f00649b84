import { describe, expect, it } from 'vitest';
import { newEntryId, newHoldId, timeBase62 } from './store-ids';

describe('hold and entry ids', () => {
  it('are the prefix and 24 base62 characters, unique', () => {
    const holds = Array.from({ length: 2_000 }, newHoldId);
    const entries = Array.from({ length: 2_000 }, newEntryId);
    for (const id of holds) expect(id).toMatch(/^hold_[0-9A-Za-z]{24}$/);
    for (const id of entries) expect(id).toMatch(/^ent_[0-9A-Za-z]{24}$/);
    expect(new Set(holds).size).toBe(holds.length);
    expect(new Set(entries).size).toBe(entries.length);
  });

  it('begin with the time, so ids made later sort later', () => {
    const before = newHoldId();
    const start = Date.now();
    while (Date.now() === start) {
      // wait for the next millisecond
    }
    const after = newHoldId();
    expect(after > before).toBe(true);
    expect(after.slice(5, 13) >= timeBase62(start + 1)).toBe(true);
  });

  it('write the time as 8 base62 digits in byte order', () => {
    expect(timeBase62(0)).toBe('00000000');
    expect(timeBase62(61)).toBe('0000000z');
    expect(timeBase62(62)).toBe('00000010');
    expect(timeBase62(62 ** 8 - 1)).toBe('zzzzzzzz');
    expect(timeBase62(1_764_115_200_000)).toBe('0V3brb5k');
    // Byte order follows number order across every digit boundary.
    const times = [0, 9, 10, 35, 36, 61, 62, 3_843, 3_844, 1_700_000_000_000, 1_700_000_000_001, 1_764_115_200_000];
    const encoded = times.map(timeBase62);
    expect([...encoded].sort()).toEqual(encoded);
    expect(new Set(encoded).size).toBe(times.length);
  });
});
