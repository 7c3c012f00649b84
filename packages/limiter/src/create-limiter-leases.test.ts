import { describe, expect, it, vi } from 'vitest';
import { createLimiter } from './create-limiter';
import { account, setup, T0 } from '../test/test-setup';
import { limiterKeys } from './limiter-keys';
import { memoryLimiter } from './memory-limiter';
import type { LimiterStore } from './store';

describe('createLimiter: requests in flight', () => {
  it.each([
    ['free', 2],
    ['plus', 4],
    ['pro', 10],
    ['max', 10],
  ] as const)('%s holds %i requests in flight, then concurrency_limit_exceeded', async (plan, max) => {
    const { limiter, store } = setup();
    const who = account(plan);
    const leases = [];
    for (let i = 0; i < max; i++) {
      const slot = await limiter.acquire(who, i % 2 ? 'chat' : 'search');
      if (!slot.ok) throw new Error(`slot ${i} refused`);
      leases.push(slot.value);
    }
    expect(await limiter.acquire(who, 'images')).toEqual({ ok: false, error: { code: 'concurrency_limit_exceeded', retryAfter: 1 } });
    expect(await store.inFlight(limiterKeys.flight(who.id), T0)).toBe(max);
    await leases[0]!.release();
    await leases[0]!.release();
    expect(await store.inFlight(limiterKeys.flight(who.id), T0)).toBe(max - 1);
    expect((await limiter.acquire(who, 'fetch')).ok).toBe(true);
    expect((await limiter.acquire(who, 'fetch')).ok).toBe(false);
  });

  it('models take no slot and get a lease that does nothing', async () => {
    const { limiter, store } = setup();
    const who = account('free');
    await limiter.acquire(who, 'chat');
    await limiter.acquire(who, 'chat');
    const models = await limiter.acquire(who, 'models');
    expect(models.ok).toBe(true);
    if (models.ok) await models.value.release();
    expect(await store.inFlight(limiterKeys.flight(who.id), T0)).toBe(2);
  });

  it('a service-wide cap refuses with server_busy and takes no account slot', async () => {
    const { limiter, store } = setup({ maxInFlight: 3 });
    const a = account('free', 'acc_a');
    const b = account('pro', 'acc_b');
    expect((await limiter.acquire(a, 'chat')).ok).toBe(true);
    expect((await limiter.acquire(a, 'chat')).ok).toBe(true);
    const held = await limiter.acquire(b, 'chat');
    expect(held.ok).toBe(true);
    expect(await limiter.acquire(b, 'chat')).toEqual({ ok: false, error: { code: 'server_busy', retryAfter: 1 } });
    expect(await store.inFlight(limiterKeys.flight(b.id), T0)).toBe(1);
    expect(await store.inFlight(limiterKeys.serviceFlight(), T0)).toBe(3);
    if (held.ok) await held.value.release();
    expect(await store.inFlight(limiterKeys.serviceFlight(), T0)).toBe(2);
    expect((await limiter.acquire(b, 'chat')).ok).toBe(true);
  });

  it('a lease nobody releases expires after leaseTtlMs; extend keeps it', async () => {
    const { limiter, at } = setup({ leaseTtlMs: 1000 });
    const who = account('free');
    const kept = await limiter.acquire(who, 'chat');
    await limiter.acquire(who, 'chat');
    at(600);
    if (kept.ok) await kept.value.extend();
    at(1000);
    expect((await limiter.acquire(who, 'chat')).ok).toBe(true);
    expect(await limiter.acquire(who, 'chat')).toEqual({ ok: false, error: { code: 'concurrency_limit_exceeded', retryAfter: 1 } });
    at(1600);
    expect((await limiter.acquire(who, 'chat')).ok).toBe(true);
  });

  it('extend after release does not bring the slot back', async () => {
    const { limiter, store } = setup();
    const who = account('free');
    const slot = await limiter.acquire(who, 'chat');
    if (!slot.ok) throw new Error('refused');
    await slot.value.release();
    await slot.value.extend();
    expect(await store.inFlight(limiterKeys.flight(who.id), T0)).toBe(0);
  });
});

/** A store whose every call fails like an unreachable server. */
function brokenStore(): LimiterStore {
  const fail = () => Promise.reject(new Error('connection refused'));
  return { rate: fail, acquire: fail, extend: fail, release: fail, inFlight: fail };
}

describe('createLimiter: store failures', () => {
  it('fails closed by default with service_unavailable', async () => {
    const limiter = createLimiter({ store: brokenStore() });
    expect(await limiter.admit(account('free'), 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
    expect(await limiter.acquire(account('free'), 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
  });

  it("admits with onStoreError 'open'", async () => {
    const limiter = createLimiter({ store: brokenStore(), onStoreError: 'open' });
    expect(await limiter.admit(account('free'), 'search')).toEqual({ ok: true });
    const slot = await limiter.acquire(account('free'), 'chat');
    expect(slot.ok).toBe(true);
    if (slot.ok) await expect(slot.value.release()).resolves.toBeUndefined();
  });

  it('treats a hung store as failed and gives back a late lease', async () => {
    const release = vi.fn(async (_keys: string[], _leaseId: string) => {});
    const hang = () => new Promise<never>(() => {});
    const store: LimiterStore = { rate: hang, acquire: hang, extend: hang, release, inFlight: hang };
    const limiter = createLimiter({ store, storeTimeoutMs: 5 });
    expect(await limiter.admit(account('free'), 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
    expect(await limiter.acquire(account('free', 'acc_x'), 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
    expect(release).toHaveBeenCalledTimes(1);
    expect(release.mock.calls[0]![0]).toEqual(['{acc_x}:flight']);
  });

  it('a failing release or extend does not throw; the lease expires instead', async () => {
    const inner = memoryLimiter();
    const store: LimiterStore = { ...inner, release: () => Promise.reject(new Error('down')), extend: () => Promise.reject(new Error('down')) };
    const limiter = createLimiter({ store });
    const slot = await limiter.acquire(account('free'), 'chat');
    if (!slot.ok) throw new Error('refused');
    await expect(slot.value.extend()).resolves.toBeUndefined();
    await expect(slot.value.release()).resolves.toBeUndefined();
  });
});
