import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LimiterStore } from '@tollgate/limiter';

/** What a store's test gives the contract suite: a fresh store and how to dispose of it. */
export type MakeLimiterStore = () => Promise<{ store: LimiterStore; cleanup?: () => Promise<void> }>;

const T0 = 1_700_000_000_000;

/**
 * The contract every `LimiterStore` passes (memory, Redis, …): exact GCRA, all-or-nothing over
 * several limits and semaphores, and leases that expire.
 *
 * @example
 * runLimiterStoreCases('memory', async () => ({ store: memoryLimiter() }));
 */
export function runLimiterStoreCases(label: string, make: MakeLimiterStore): void {
  describe(`LimiterStore contract: ${label}`, () => {
    let store: LimiterStore;
    let cleanup: (() => Promise<void>) | undefined;
    let scope: string;
    // Keys unique to each test, so stores that share a server do not see each other's state.
    const key = (name: string) => `{acc_${scope}}:${name}`;

    beforeEach(async () => {
      ({ store, cleanup } = await make());
      scope = Math.random().toString(36).slice(2, 12);
    });
    afterEach(async () => {
      await cleanup?.();
      await store.close?.();
    });

    describe('rate (GCRA)', () => {
      it('admits the burst at once, then one request per interval', async () => {
        const limit = { key: key('rate:plan'), intervalMs: 1000, burst: 7 };
        for (let i = 0; i < 7; i++) expect(await store.rate([limit], T0)).toEqual({ ok: true });
        expect(await store.rate([limit], T0)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
        expect(await store.rate([limit], T0 + 999)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1 } });
        expect(await store.rate([limit], T0 + 1000)).toEqual({ ok: true });
        expect(await store.rate([limit], T0 + 1000)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
        // Four seconds later exactly four more are admitted.
        for (let i = 0; i < 4; i++) expect(await store.rate([limit], T0 + 5000)).toEqual({ ok: true });
        expect(await store.rate([limit], T0 + 5000)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
      });

      it('gives an idle key its whole burst again', async () => {
        const limit = { key: key('rate:plan'), intervalMs: 500, burst: 13 };
        for (let i = 0; i < 13; i++) expect((await store.rate([limit], T0)).ok).toBe(true);
        expect((await store.rate([limit], T0)).ok).toBe(false);
        for (let i = 0; i < 13; i++) expect((await store.rate([limit], T0 + 6500)).ok).toBe(true);
        expect(await store.rate([limit], T0 + 6500)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 500 } });
      });

      it('consumes nothing when one of several limits refuses', async () => {
        const wide = { key: key('rate:plan'), intervalMs: 1000, burst: 2 };
        const narrow = { key: key('rate:search'), intervalMs: 60_000, burst: 1 };
        expect(await store.rate([wide, narrow], T0)).toEqual({ ok: true });
        expect(await store.rate([wide, narrow], T0)).toEqual({ ok: false, error: { index: 1, retryAfterMs: 60_000 } });
        // `wide` kept its second request: the refused call did not take it.
        expect(await store.rate([wide], T0)).toEqual({ ok: true });
        expect(await store.rate([wide], T0)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
      });

      it('names the first refusing limit and waits for the slowest', async () => {
        const first = { key: key('rate:plan'), intervalMs: 1000, burst: 1 };
        const second = { key: key('rate:fetch'), intervalMs: 2000, burst: 1 };
        expect(await store.rate([first, second], T0)).toEqual({ ok: true });
        expect(await store.rate([first, second], T0 + 500)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1500 } });
        expect(await store.rate([first, second], T0 + 1500)).toEqual({ ok: false, error: { index: 1, retryAfterMs: 500 } });
        expect(await store.rate([first, second], T0 + 2000)).toEqual({ ok: true });
      });

      it('takes back a refunded request on every limit it names, and forgets a key left with nothing', async () => {
        const plan = { key: key('rate:plan'), intervalMs: 1000, burst: 2 };
        const search = { key: key('rate:search'), intervalMs: 2000, burst: 1 };
        expect(await store.rate([plan, search], T0)).toEqual({ ok: true });
        expect((await store.rate([plan, search], T0)).ok).toBe(false);
        // A request refused after all (its slot): as if it never came.
        await store.refund?.([plan, search], T0);
        expect(await store.rate([plan, search], T0)).toEqual({ ok: true });
        expect(await store.rate([plan], T0)).toEqual({ ok: true });
        expect(await store.rate([plan], T0)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
        // Refunding a key that holds nothing (its TAT passed) leaves it so: no credit beyond the burst.
        await store.refund?.([search], T0 + 10_000);
        expect(await store.rate([search], T0 + 10_000)).toEqual({ ok: true });
        expect(await store.rate([search], T0 + 10_000)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 2000 } });
        expect(typeof store.refund).toBe('function');
      });

      it('reads a TAT further ahead than burst x interval (a clock stepped back) as a full burst, not as the step', async () => {
        const limit = { key: key('rate:plan'), intervalMs: 1000, burst: 7 };
        expect(await store.rate([limit], T0 + 3_600_000)).toEqual({ ok: true });
        // An hour back: one interval to wait at most, as for any key that just used its burst.
        expect(await store.rate([limit], T0)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
        expect(await store.rate([limit], T0 + 1000)).toEqual({ ok: true });
      });

      it('keeps keys apart', async () => {
        const a = { key: key('rate:a'), intervalMs: 1000, burst: 1 };
        const b = { key: key('rate:b'), intervalMs: 1000, burst: 1 };
        expect(await store.rate([a], T0)).toEqual({ ok: true });
        expect(await store.rate([b], T0)).toEqual({ ok: true });
        expect((await store.rate([a], T0)).ok).toBe(false);
      });

      it('paces fractional intervals', async () => {
        const limit = { key: key('rate:shared'), intervalMs: 60_000 / 7, burst: 1 };
        expect(await store.rate([limit], T0)).toEqual({ ok: true });
        const refused = await store.rate([limit], T0 + 1000);
        expect(refused.ok).toBe(false);
        if (!refused.ok) expect(refused.error.retryAfterMs).toBeCloseTo(60_000 / 7 - 1000, 2);
        expect((await store.rate([limit], T0 + 8571)).ok).toBe(false);
        expect(await store.rate([limit], T0 + 8572)).toEqual({ ok: true });
      });
    });

    describe('leases', () => {
      it('holds at most max leases and frees a slot on release', async () => {
        const sem = { key: key('flight'), max: 2 };
        expect(await store.acquire([sem], 'a', 60_000, T0)).toEqual({ ok: true });
        expect(await store.acquire([sem], 'b', 60_000, T0)).toEqual({ ok: true });
        expect(await store.acquire([sem], 'c', 60_000, T0)).toEqual({ ok: false, error: { index: 0 } });
        expect(await store.inFlight(sem.key, T0)).toBe(2);
        await store.release([sem.key], 'a');
        expect(await store.inFlight(sem.key, T0)).toBe(1);
        expect(await store.acquire([sem], 'c', 60_000, T0)).toEqual({ ok: true });
      });

      it('takes all semaphores or none', async () => {
        const account = { key: key('flight'), max: 2 };
        const service = { key: `{$service}:flight:${scope}`, max: 1 };
        expect(await store.acquire([account, service], 'a', 60_000, T0)).toEqual({ ok: true });
        expect(await store.acquire([account, service], 'b', 60_000, T0)).toEqual({ ok: false, error: { index: 1 } });
        expect(await store.inFlight(account.key, T0)).toBe(1);
        expect(await store.inFlight(service.key, T0)).toBe(1);
        await store.release([account.key, service.key], 'a');
        expect(await store.inFlight(account.key, T0)).toBe(0);
        expect(await store.inFlight(service.key, T0)).toBe(0);
        expect(await store.acquire([account, service], 'b', 60_000, T0)).toEqual({ ok: true });
      });

      it('releases idempotently and only the named lease', async () => {
        const sem = { key: key('flight'), max: 3 };
        await store.acquire([sem], 'a', 60_000, T0);
        await store.acquire([sem], 'b', 60_000, T0);
        await store.release([sem.key], 'a');
        await store.release([sem.key], 'a');
        await store.release([sem.key], 'unknown');
        await store.release([key('never-used')], 'a');
        expect(await store.inFlight(sem.key, T0)).toBe(1);
      });

      it('gives an expired lease slot back', async () => {
        const sem = { key: key('flight'), max: 1 };
        expect(await store.acquire([sem], 'crashed', 1000, T0)).toEqual({ ok: true });
        expect(await store.inFlight(sem.key, T0 + 999)).toBe(1);
        expect(await store.acquire([sem], 'next', 1000, T0 + 999)).toEqual({ ok: false, error: { index: 0 } });
        expect(await store.inFlight(sem.key, T0 + 1000)).toBe(0);
        expect(await store.acquire([sem], 'next', 1000, T0 + 1000)).toEqual({ ok: true });
      });

      it('extends a live lease and never revives an expired one', async () => {
        const sem = { key: key('flight'), max: 1 };
        await store.acquire([sem], 'long', 1000, T0);
        await store.extend([sem.key], 'long', 1000, T0 + 500);
        expect(await store.inFlight(sem.key, T0 + 1499)).toBe(1);
        expect(await store.acquire([sem], 'other', 1000, T0 + 1499)).toEqual({ ok: false, error: { index: 0 } });
        expect(await store.inFlight(sem.key, T0 + 1500)).toBe(0);
        await store.extend([sem.key], 'long', 1000, T0 + 1500);
        expect(await store.inFlight(sem.key, T0 + 1600)).toBe(0);
        expect(await store.acquire([sem], 'other', 1000, T0 + 1600)).toEqual({ ok: true });
      });

      it('extends only the lease it names', async () => {
        const sem = { key: key('flight'), max: 2 };
        await store.acquire([sem], 'a', 1000, T0);
        await store.acquire([sem], 'b', 1000, T0);
        await store.extend([sem.key], 'a', 5000, T0 + 500);
        expect(await store.inFlight(sem.key, T0 + 1000)).toBe(1);
        await store.extend([sem.key], 'never-acquired', 5000, T0 + 1000);
        expect(await store.inFlight(sem.key, T0 + 1000)).toBe(1);
        expect(await store.inFlight(sem.key, T0 + 5500)).toBe(0);
      });
    });
  });
}
