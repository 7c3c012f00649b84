import { describe, expect, it } from 'vitest';
import { account, setup } from '../test/test-setup';

describe('createLimiter: plan rate limits', () => {
  // The spec's table: burst = 1 + rpm / 10, pace = rpm / 60 per second.
  it.each([
    ['free', 7, 1000],
    ['plus', 13, 500],
    ['pro', 61, 100],
    ['max', 61, 100],
  ] as const)('%s admits a burst of %i, then one request every %i ms', async (plan, burst, intervalMs) => {
    const { limiter, at } = setup();
    const who = account(plan);
    for (let i = 0; i < burst; i++) expect(await limiter.admit(who, 'chat')).toEqual({ ok: true });
    expect(await limiter.admit(who, 'chat')).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 1 } });
    at(intervalMs - 1);
    expect((await limiter.admit(who, 'chat')).ok).toBe(false);
    at(intervalMs);
    expect(await limiter.admit(who, 'images')).toEqual({ ok: true });
    expect((await limiter.admit(who, 'chat')).ok).toBe(false);
    at(4 * intervalMs);
    for (let i = 0; i < 3; i++) expect(await limiter.admit(who, 'chat')).toEqual({ ok: true });
    expect((await limiter.admit(who, 'chat')).ok).toBe(false);
    // A minute idle gives the whole burst back.
    at(60_000);
    for (let i = 0; i < burst; i++) expect(await limiter.admit(who, 'chat')).toEqual({ ok: true });
    expect((await limiter.admit(who, 'chat')).ok).toBe(false);
  });

  it('keeps accounts apart', async () => {
    const { limiter } = setup();
    for (let i = 0; i < 7; i++) await limiter.admit(account('free', 'acc_a'), 'chat');
    expect((await limiter.admit(account('free', 'acc_a'), 'chat')).ok).toBe(false);
    expect(await limiter.admit(account('free', 'acc_b'), 'chat')).toEqual({ ok: true });
  });
});

describe('createLimiter: fixed per-endpoint limits', () => {
  it.each(['search', 'fetch'] as const)('%s: burst 4, then one every 2 s, Retry-After rounded up', async (endpoint) => {
    const { limiter, at } = setup();
    const who = account('pro');
    for (let i = 0; i < 4; i++) expect(await limiter.admit(who, endpoint)).toEqual({ ok: true });
    expect(await limiter.admit(who, endpoint)).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 2 } });
    at(500);
    expect(await limiter.admit(who, endpoint)).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 2 } });
    at(1001);
    expect(await limiter.admit(who, endpoint)).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 1 } });
    at(2000);
    expect(await limiter.admit(who, endpoint)).toEqual({ ok: true });
    expect(await limiter.admit(who, endpoint)).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 2 } });
  });

  it('models: its own 60 a minute (burst 7), apart from the plan', async () => {
    const { limiter, at } = setup();
    const who = account('free');
    for (let i = 0; i < 7; i++) expect(await limiter.admit(who, 'models')).toEqual({ ok: true });
    expect(await limiter.admit(who, 'models')).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 1 } });
    for (let i = 0; i < 7; i++) expect(await limiter.admit(who, 'chat')).toEqual({ ok: true });
    at(1000);
    expect(await limiter.admit(who, 'models')).toEqual({ ok: true });
    expect((await limiter.admit(who, 'models')).ok).toBe(false);
  });

  it('search and fetch also count toward the plan', async () => {
    const { limiter } = setup();
    const who = account('free');
    for (let i = 0; i < 4; i++) expect(await limiter.admit(who, 'search')).toEqual({ ok: true });
    for (let i = 0; i < 3; i++) expect(await limiter.admit(who, 'fetch')).toEqual({ ok: true });
    expect(await limiter.admit(who, 'fetch')).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 1 } });
    expect((await limiter.admit(who, 'chat')).ok).toBe(false);
  });

  it('a request the endpoint limit refuses takes nothing from the plan', async () => {
    const { limiter } = setup();
    const who = account('pro');
    for (let i = 0; i < 4; i++) await limiter.admit(who, 'search');
    for (let i = 0; i < 10; i++) expect((await limiter.admit(who, 'search')).ok).toBe(false);
    for (let i = 0; i < 57; i++) expect(await limiter.admit(who, 'chat')).toEqual({ ok: true });
    expect((await limiter.admit(who, 'chat')).ok).toBe(false);
  });
});

describe('createLimiter: service-wide search + fetch limit', () => {
  it('refuses with upstream_busy and consumes nothing of the account', async () => {
    const { limiter, at } = setup({ sharedSearchFetchPerMinute: 6 });
    expect(await limiter.admit(account('free', 'acc_a'), 'search')).toEqual({ ok: true });
    const b = account('free', 'acc_b');
    expect(await limiter.admit(b, 'fetch')).toEqual({ ok: false, error: { code: 'upstream_busy', retryAfter: 10 } });
    at(2500);
    expect(await limiter.admit(b, 'search')).toEqual({ ok: false, error: { code: 'upstream_busy', retryAfter: 8 } });
    for (let i = 0; i < 7; i++) expect(await limiter.admit(b, 'chat')).toEqual({ ok: true });
    expect((await limiter.admit(b, 'chat')).ok).toBe(false);
    at(10_000);
    expect(await limiter.admit(account('free', 'acc_c'), 'fetch')).toEqual({ ok: true });
  });

  it("an account's own refusal wins over the shared one", async () => {
    const { limiter } = setup({ sharedSearchFetchPerMinute: 1 });
    const who = account('free');
    expect(await limiter.admit(who, 'search')).toEqual({ ok: true });
    for (let i = 0; i < 3; i++) {
      expect(await limiter.admit(who, 'search')).toEqual({ ok: false, error: { code: 'upstream_busy', retryAfter: 60 } });
    }
    for (let i = 0; i < 6; i++) expect(await limiter.admit(who, 'chat')).toEqual({ ok: true });
    const refused = await limiter.admit(who, 'search');
    expect(refused).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 60 } });
  });

  it('leaves chat, images and models alone', async () => {
    const { limiter } = setup({ sharedSearchFetchPerMinute: 1 });
    await limiter.admit(account('free', 'acc_a'), 'search');
    expect(await limiter.admit(account('free', 'acc_b'), 'chat')).toEqual({ ok: true });
    expect(await limiter.admit(account('free', 'acc_b'), 'images')).toEqual({ ok: true });
    expect(await limiter.admit(account('free', 'acc_b'), 'models')).toEqual({ ok: true });
  });
});
