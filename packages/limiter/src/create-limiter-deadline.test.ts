import type { Plan, Timers } from '@tollgate/core';
import { describe, expect, it, vi } from 'vitest';
import { createLimiter } from './create-limiter';
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
