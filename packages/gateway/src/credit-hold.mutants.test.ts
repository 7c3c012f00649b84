/**
 * A settlement that cannot be written must not cost the client its reply, whether or not the
 * embedder passed `onSettleError`: after the retries the hold is left to expire and the request
 * is answered as served.
 */
import { memoryStore } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { chatBody, setup } from '../test/test-harness';
import { manualClock, manualTimers } from '../test/test-timers';

/** A gateway on fake time whose store never takes a settle, and a chat request sent to it. */
async function chatOnFailingSettles(options: { onError?: (error: unknown) => void; holdTtlMs?: number } = {}) {
  const clock = manualClock();
  const time = manualTimers(clock);
  const store = memoryStore({ now: clock.now });
  let attempts = 0;
  const failing = Object.assign(Object.create(store) as typeof store, {
    settle: async () => {
      attempts++;
      throw new Error('database is gone');
    },
  });
  const t = await setup({ store: failing, clock, timers: time.timers, ...options });
  let done = false;
  const pending = t.post('/v1/chat/completions', chatBody()).then((response) => {
    done = true;
    return response;
  });
  // The first attempt needs no timer, only the key's hash (a thread-pool round trip, slow on a busy
  // machine): wait for it in real time, then run the retries' timers on the fake clock.
  await expect.poll(() => attempts, { timeout: 10_000 }).toBeGreaterThan(0);
  for (let step = 0; step < 50 && !done; step++) await time.advance(100);
  return { response: await pending, time, attempts: () => attempts };
}

describe('a settlement that cannot be written, without onSettleError', () => {
  it('is retried four times, then the reply is still the 200 the client was served', async () => {
    const errors: unknown[] = [];
    const { response, attempts } = await chatOnFailingSettles({ onError: (error) => void errors.push(error) });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { object: string }).object).toBe('chat.completion');
    expect(attempts()).toBe(4);
    expect(errors).toEqual([]);
  });

  it('gives up quietly once the background retries outlive the hold: no onSettleError to call, nothing thrown', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const { response, time, attempts } = await chatOnFailingSettles({ holdTtlMs: 10_000 });
      expect(response.status).toBe(200);
      // The background attempts (0.8, 1.6, 3.2, 5 s, ...) run past the 10 s TTL, then stop.
      for (let step = 0; step < 300; step++) await time.advance(100);
      const settled = attempts();
      for (let step = 0; step < 100; step++) await time.advance(100);
      expect(attempts()).toBe(settled);
      expect(attempts()).toBeGreaterThan(4);
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });
});
