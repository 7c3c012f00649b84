import { describe, expect, it } from 'vitest';
import { runLimiterStoreCases } from '@tollgate/testing/store-contract';
import { memoryLimiter } from './memory-limiter';

runLimiterStoreCases('memory', async () => ({ store: memoryLimiter() }));

const T0 = 1_700_000_000_000;

describe('memoryLimiter bounds', () => {
  it('forgets the least recently used rate state beyond maxKeys', async () => {
    const store = memoryLimiter({ maxKeys: 2 });
    const limit = (name: string) => ({ key: name, intervalMs: 1000, burst: 1 });
    expect(await store.rate([limit('a')], T0)).toEqual({ ok: true });
    expect(await store.rate([limit('b')], T0)).toEqual({ ok: true });
    expect((await store.rate([limit('a')], T0)).ok).toBe(false); // `a` is now the most recent
    expect(await store.rate([limit('c')], T0)).toEqual({ ok: true }); // evicts `b`
    expect((await store.rate([limit('a')], T0)).ok).toBe(false);
    expect(await store.rate([limit('b')], T0)).toEqual({ ok: true }); // `b` was forgotten
  });

  it('never evicts live leases, whatever the number of rate keys', async () => {
    const store = memoryLimiter({ maxKeys: 1 });
    expect(await store.acquire([{ key: 'f1', max: 1 }], 'l1', 60_000, T0)).toEqual({ ok: true });
    expect(await store.acquire([{ key: 'f2', max: 1 }], 'l2', 60_000, T0)).toEqual({ ok: true });
    for (let i = 0; i < 10; i++) await store.rate([{ key: `r${i}`, intervalMs: 1000, burst: 1 }], T0);
    expect(await store.acquire([{ key: 'f1', max: 1 }], 'l3', 60_000, T0)).toEqual({ ok: false, error: { index: 0 } });
    expect(await store.inFlight('f2', T0)).toBe(1);
  });

  it('re-acquiring a lease it already holds takes no second slot', async () => {
    const store = memoryLimiter();
    expect(await store.acquire([{ key: 'f', max: 1 }], 'l', 1000, T0)).toEqual({ ok: true });
    expect(await store.acquire([{ key: 'f', max: 1 }], 'l', 1000, T0)).toEqual({ ok: true });
    expect(await store.inFlight('f', T0)).toBe(1);
  });
});
