import type { Plan, Timers } from '@tollgate/core';
import { describe, expect, it, vi } from 'vitest';
import { createLimiter } from './create-limiter';
import { limiterKeys } from './limiter-keys';
import { memoryLimiter } from './memory-limiter';
import type { LimiterStore } from './store';

/** Timers that only record: a deadline fires when the test says so, never by real time. */
function manualTimers() {
  const armed: { fn: () => void; ms: number }[] = [];
  const timers: Timers = {
    setTimeout: (fn, ms) => armed.push({ fn, ms }),
    clearTimeout: () => {},
  };
  return { timers, armed };
}

const account = (plan: Plan, id = `acc_${plan}`) => ({ id, plan });
const hang = () => new Promise<never>(() => {});
const hungStore = (): LimiterStore => ({ rate: hang, acquire: hang, extend: hang, release: async () => {}, inFlight: hang });
const UNAVAILABLE = { ok: false, error: { code: 'service_unavailable', retryAfter: 1 } };

describe('createLimiter: the store deadline', () => {
  it('arms 2,000 ms on the injected timers by default, for admit and for acquire', async () => {
    const { timers, armed } = manualTimers();
    const limiter = createLimiter({ store: hungStore(), timers });
    const admitted = limiter.admit(account('free'), 'chat');
    const slot = limiter.acquire(account('free'), 'chat');
    expect(armed.map((timer) => timer.ms)).toEqual([2_000, 2_000]);
    for (const timer of armed) timer.fn();
    expect(await admitted).toEqual(UNAVAILABLE);
    expect(await slot).toEqual(UNAVAILABLE);
  });

  it('arms the configured storeTimeoutMs', () => {
    const { timers, armed } = manualTimers();
    const limiter = createLimiter({ store: hungStore(), timers, storeTimeoutMs: 7 });
    void limiter.admit(account('free'), 'search');
    expect(armed.map((timer) => timer.ms)).toEqual([7]);
  });

  it('arms nothing on a local store (memoryLimiter), whatever storeTimeoutMs says', async () => {
    const { timers, armed } = manualTimers();
    for (const storeTimeoutMs of [undefined, 7]) {
      const limiter = createLimiter({ store: memoryLimiter(), timers, ...(storeTimeoutMs === undefined ? {} : { storeTimeoutMs }) });
      expect(await limiter.admit(account('free'), 'chat')).toEqual({ ok: true, value: undefined });
      expect((await limiter.acquire(account('free'), 'chat')).ok).toBe(true);
    }
    expect(armed).toEqual([]);
    expect(memoryLimiter().local).toBe(true);
  });

  it('with storeTimeoutMs 0 arms nothing and waits for a slow store', async () => {
    const { timers, armed } = manualTimers();
    const inner = memoryLimiter();
    const later = <T>(value: Promise<T>) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1));
    const store: LimiterStore = { ...inner, local: false, rate: (...args) => later(inner.rate(...args)), acquire: (...args) => later(inner.acquire(...args)) };
    const limiter = createLimiter({ store, timers, storeTimeoutMs: 0 });
    expect(await limiter.admit(account('free'), 'chat')).toEqual({ ok: true, value: undefined });
    const slot = await limiter.acquire(account('free'), 'chat');
    expect(slot.ok).toBe(true);
    expect(armed).toEqual([]);
  });
});

describe('createLimiter: answers that come after the deadline', () => {
  /** A memory store whose answers wait for the test: each call runs at once, its answer is released by `land()`. */
  function lateStore() {
    const inner = memoryLimiter();
    const waiting: (() => void)[] = [];
    const late =
      <A extends unknown[], T>(call: (...args: A) => Promise<T>) =>
      (...args: A) =>
        new Promise<T>((resolve) => {
          const answer = call(...args);
          waiting.push(() => resolve(answer));
        });
    const store: LimiterStore = { ...inner, local: false, rate: late(inner.rate), acquire: late(inner.acquire) };
    const land = async () => {
      for (const resolve of waiting.splice(0)) resolve();
      await new Promise((resolve) => setTimeout(resolve, 0));
    };
    return { store, inner, land };
  }

  it('a refused admit whose rate lands later takes nothing: the request is given back', async () => {
    const { timers, armed } = manualTimers();
    const { store, land } = lateStore();
    const limiter = createLimiter({ store, timers, now: () => 1_000_000 });
    const refused = limiter.admit(account('free'), 'chat');
    for (const timer of armed.splice(0)) timer.fn();
    expect(await refused).toEqual(UNAVAILABLE);
    await land();
    // The whole burst of 7 is still there.
    const admits = Array.from({ length: 8 }, () => limiter.admit(account('free'), 'chat'));
    await land();
    expect((await Promise.all(admits)).filter((result) => result.ok)).toHaveLength(7);
  });

  it('a refused acquire whose slots land later, one semaphore after another, holds none of them', async () => {
    const { timers, armed } = manualTimers();
    const { store, inner, land } = lateStore();
    // As a store over the network takes them: the account's semaphore, then the service's, in two calls.
    const twoSteps: LimiterStore = {
      ...store,
      acquire: async (semaphores, leaseId, ttlMs, now) => {
        for (const semaphore of semaphores) {
          const taken = await store.acquire([semaphore], leaseId, ttlMs, now);
          if (!taken.ok) return taken;
        }
        return { ok: true, value: undefined };
      },
    };
    const limiter = createLimiter({ store: twoSteps, timers, maxInFlight: 1, now: () => 1_000_000 });
    const refused = limiter.acquire(account('free'), 'chat');
    for (const timer of armed.splice(0)) timer.fn();
    expect(await refused).toEqual(UNAVAILABLE);
    await land();
    await land();
    expect([await inner.inFlight(limiterKeys.flight('acc_free'), 1_000_000), await inner.inFlight(limiterKeys.serviceFlight(), 1_000_000)]).toEqual([0, 0]);
  });
});

describe('createLimiter: a released lease', () => {
  it('is never extended in the store again', async () => {
    const inner = memoryLimiter();
    const extend = vi.fn(inner.extend);
    const limiter = createLimiter({ store: { ...inner, extend } });
    const slot = await limiter.acquire(account('free'), 'chat');
    if (!slot.ok) throw new Error('refused');
    await slot.value.extend();
    expect(extend).toHaveBeenCalledTimes(1);
    await slot.value.release();
    await slot.value.extend();
    expect(extend).toHaveBeenCalledTimes(1);
  });
});
