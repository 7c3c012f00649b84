import { memoryStore } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { chatBody, setup } from '../test/test-harness';
import { holdCredits } from './credit-hold';
import { flush, manualClock, manualTimers } from '../test/test-timers';

describe('a settlement that cannot be written', () => {
  it('is retried four times before the reply, then in the background for as long as the hold lives, then reported with the request, account and amount', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const store = memoryStore({ now: clock.now });
    const attemptedAt: number[] = [];
    const failing = Object.assign(Object.create(store) as typeof store, {
      settle: async () => {
        attemptedAt.push(clock.now());
        throw new Error('database is gone');
      },
    });
    const reports: { requestId: string; accountId: string; micros: number }[] = [];
    const t = await setup({ store: failing, clock, timers: time.timers, holdTtlMs: 20_000, onSettleError: (details) => void reports.push(details) });
    let answered = false;
    const pending = t.post('/v1/chat/completions', chatBody()).then((response) => {
      answered = true;
      return response;
    });
    // The first attempt needs no timer, only the key's hash (a thread-pool round trip, slow on a busy
    // machine): wait for it in real time, or the fake clock below could run out before the request
    // reaches its settlement. The retries wait on the gateway's timers: moving the fake clock runs them, nothing sleeps.
    await expect.poll(() => attemptedAt.length, { timeout: 10_000 }).toBeGreaterThan(0);
    for (let step = 0; step < 50 && !answered; step++) await time.advance(100);
    const response = await pending;
    expect(response.status).toBe(200);
    // The reply waited for four attempts, their backoff doubling from 100 ms; nothing reported yet.
    expect(attemptedAt).toHaveLength(4);
    expect(attemptedAt.slice(1).map((at, index) => at - (attemptedAt[index] ?? 0))).toEqual([100, 200, 400]);
    expect(reports).toEqual([]);
    for (let step = 0; step < 400 && reports.length === 0; step++) await time.advance(100);
    // Then 0.8, 1.6, 3.2 s and every 5 s until the hold's 20 s TTL had passed (20.6 s after the fourth).
    expect(attemptedAt.slice(4).map((at, index) => at - (attemptedAt[index + 3] ?? 0))).toEqual([800, 1_600, 3_200, 5_000, 5_000, 5_000]);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ requestId: response.headers.get('x-request-id'), accountId: t.accountId });
    expect(reports[0]!.micros).toBeGreaterThan(0);
  });

  it('is charged exactly once when the store comes back during the background retries, and nothing is reported', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const store = memoryStore({ now: clock.now });
    let down = true;
    let attempts = 0;
    const flaky = Object.assign(Object.create(store) as typeof store, {
      settle: async (...args: Parameters<typeof store.settle>) => {
        attempts++;
        if (down) throw new Error('database is restarting');
        return store.settle(...args);
      },
    });
    const reports: unknown[] = [];
    const t = await setup({ store: flaky, clock, timers: time.timers, holdTtlMs: 60_000, onSettleError: (details) => void reports.push(details) });
    const before = (await t.balance()).balance;
    let answered = false;
    const pending = t.post('/v1/chat/completions', chatBody()).then((response) => {
      answered = true;
      return response;
    });
    // The first attempt, in real time (see the test above), then the retries on the fake clock.
    await expect.poll(() => attempts, { timeout: 10_000 }).toBeGreaterThan(0);
    for (let step = 0; step < 50 && !answered; step++) await time.advance(100);
    const response = await pending;
    expect(response.status).toBe(200);
    for (let step = 0; step < 20; step++) await time.advance(100); // the first background attempt (0.8 s) fails too
    expect(attempts).toBe(5);
    expect(await t.balance()).toEqual({ balance: before, held: expect.any(Number), available: expect.any(Number) });
    down = false;
    for (let step = 0; step < 100; step++) await time.advance(100);
    const after = await t.balance();
    expect(after.held).toBe(0);
    const charged = before - after.balance;
    expect(charged).toBeGreaterThan(0);
    expect(attempts).toBe(6);
    expect(reports).toEqual([]);
    const entries = await store.entries(t.accountId);
    expect(entries.filter((entry) => entry.kind === 'charge')).toHaveLength(1);
  });
});

describe('a release that cannot be written', () => {
  it('is retried as a settle is, so the money is not left held until the hold expires, and nothing is charged', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const store = memoryStore({ now: clock.now });
    const account = await store.createAccount({ plan: 'pro' });
    await store.addCredits(account.id, 10_000);
    let failures = 5;
    const attemptedAt: number[] = [];
    const flaky = Object.assign(Object.create(store) as typeof store, {
      release: async (...args: Parameters<typeof store.release>) => {
        attemptedAt.push(clock.now());
        if (failures-- > 0) throw new Error('database is restarting');
        return store.release(...args);
      },
    });
    const held = await holdCredits(
      flaky,
      { account, funding: 'credits', app: false },
      { micros: 4_000, minimum: 4_000, ttlMs: 60_000, requestId: 'req_release', timers: time.timers },
    );
    if (!held.ok) throw new Error('hold refused');
    let released = false;
    const releasing = held.value.release().then(() => {
      released = true;
    });
    await flush(); // the first attempt fails and arms its retry's timer before the clock moves
    for (let step = 0; step < 20 && !released; step++) await time.advance(100);
    await releasing;
    // The caller waited for four attempts, 100, 200 and 400 ms apart; the money is still held.
    expect(attemptedAt.slice(1).map((at, index) => at - (attemptedAt[index] ?? 0))).toEqual([100, 200, 400]);
    expect((await store.getBalance(account.id)).held).toBe(4_000);
    // In the background: 0.8 s later fails too, 1.6 s after that goes through.
    for (let step = 0; step < 40; step++) await time.advance(100);
    expect(attemptedAt.slice(4).map((at, index) => at - (attemptedAt[index + 3] ?? 0))).toEqual([800, 1_600]);
    expect(await store.getBalance(account.id)).toEqual({ balance: 10_000, held: 0, available: 10_000 });
    expect((await store.entries(account.id)).filter((entry) => entry.kind === 'charge')).toEqual([]);
    // Released once: a second release writes nothing.
    await held.value.release();
    expect(attemptedAt).toHaveLength(6);
  });
});
