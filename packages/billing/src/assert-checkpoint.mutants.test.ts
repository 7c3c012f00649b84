import { describe, expect, it } from 'vitest';
import { assertCheckpoints } from './assert-checkpoint';
import { createMemoryStore } from './memory-store';

// A checkpoint batch is checked whole before a store writes any of it: a malformed entry (a bug
// in the caller) must never leave half a batch recorded, and names what was wrong.
describe('assertCheckpoints', () => {
  it('refuses a missing or empty hold id, a malformed amount and a ttl that is not positive, naming each', () => {
    expect(() => assertCheckpoints([{ holdId: '', micros: 1, ttlMs: 1_000 }])).toThrow(new TypeError('checkpoint holdId must be a hold id'));
    const notAString = JSON.parse('{"holdId": 42, "micros": 1, "ttlMs": 1000}');
    expect(() => assertCheckpoints([notAString])).toThrow(new TypeError('checkpoint holdId must be a hold id'));
    expect(() => assertCheckpoints([{ holdId: 'hold_1', micros: -1, ttlMs: 1_000 }])).toThrow(
      new RangeError('checkpoint micros must be a non-negative safe integer of micro-dollars'),
    );
    expect(() => assertCheckpoints([{ holdId: 'hold_1', micros: 1, ttlMs: 0 }])).toThrow(new RangeError('checkpoint ttlMs must be a positive number'));
  });

  it('a batch with one malformed entry records none of it: the expired hold is then charged nothing', async () => {
    let time = 1_000_000;
    const { store } = createMemoryStore({ now: () => time });
    const account = await store.createAccount({ plan: 'free' });
    await store.addCredits(account.id, 10_000);
    const hold = await store.hold(account.id, { micros: 5_000, ttlMs: 1_000 });
    if (!hold.ok) throw new Error('the hold fits');
    const holdId = hold.value.holdId;
    if (store.checkpoint === undefined) throw new Error('the memory store checkpoints');
    await expect(
      store.checkpoint([
        { holdId, micros: 700, ttlMs: 1_000 },
        { holdId: '', micros: 100, ttlMs: 1_000 },
      ]),
    ).rejects.toThrow('checkpoint holdId must be a hold id');
    time += 1_000;
    expect(await store.releaseExpired()).toBe(1);
    expect(await store.getBalance(account.id)).toEqual({ balance: 10_000, held: 0, available: 10_000 });
    // The same checkpoint, well formed, is what an expired hold pays.
    const second = await store.hold(account.id, { micros: 5_000, ttlMs: 1_000 });
    if (!second.ok) throw new Error('the hold fits');
    expect(await store.checkpoint([{ holdId: second.value.holdId, micros: 700, ttlMs: 1_000 }])).toBe(1);
    time += 1_000;
    expect(await store.releaseExpired()).toBe(1);
    expect(await store.getBalance(account.id)).toEqual({ balance: 9_300, held: 0, available: 9_300 });
  });
});
