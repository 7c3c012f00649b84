import { memoryStore } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { chatBody, setup } from '../test/test-harness';
import { manualClock, manualTimers } from '../test/test-timers';

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
