import { memoryStore } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { chatBody, setup } from '../test/test-harness';
import { manualClock, manualTimers } from '../test/test-timers';

describe('a settlement that cannot be written', () => {
  it('is retried, then reported with the request, account and amount', async () => {
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
    const t = await setup({ store: failing, clock, timers: time.timers, onSettleError: (details) => void reports.push(details) });
    const pending = t.post('/v1/chat/completions', chatBody());
    // The retries wait on the gateway's timers: moving the fake clock runs them, nothing sleeps.
    for (let step = 0; step < 50 && reports.length === 0; step++) await time.advance(100);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(attemptedAt).toHaveLength(4);
    // Backoff doubles from 100 ms between the four attempts.
    expect(attemptedAt.slice(1).map((at, index) => at - (attemptedAt[index] ?? 0))).toEqual([100, 200, 400]);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ requestId: response.headers.get('x-request-id'), accountId: t.accountId });
    expect(reports[0]!.micros).toBeGreaterThan(0);
  });
});
