import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode, type ModelConfig, type Plan } from '@tollgate/core';
import { memoryLimiter, type LimiterStore } from '@tollgate/limiter';
import { limiterKeys } from '@tollgate/limiter/store-kit';
import type { PageFetcher, Provider } from '@tollgate/providers';
import type { AppPrincipal } from './gateway-options';
import { chatBody, readEvents, setup, testModels, type SetupOptions } from '../test/test-harness';
import { manualClock, manualTimers } from '../test/test-timers';

/** A gateway on a manual clock with manual timers and a memory limiter the test can inspect. */
async function limitsSetup(options: SetupOptions = {}) {
  const clock = manualClock();
  const time = manualTimers(clock);
  const t = await setup({ clock, timers: time.timers, ...options });
  const chat = (headers: Record<string, string> = {}, body = chatBody()) => t.post('/v1/chat/completions', body, headers);
  const stream = (headers: Record<string, string> = {}) => t.post('/v1/chat/completions', chatBody({ stream: true }), headers);
  return { ...t, time, chat, stream };
}

/** Asserts a refusal before billing with its exact Retry-After. */
async function expectRefusal(response: Response, code: ErrorCode, retryAfter: string | null): Promise<void> {
  const entry = ERROR_CATALOGUE[code];
  expect(response.status).toBe(entry.status);
  expect(await response.json()).toEqual({ error: { message: entry.message, type: entry.type, param: null, code } });
  expect(response.headers.get('retry-after')).toBe(retryAfter);
  expect(response.headers.get('x-service-version')).toBe('tollgate/test');
  expect(response.headers.get('x-request-id')).toBeNull();
  expect(response.headers.get('x-funding')).toBeNull();
}

/**
 * Waits until a condition holds: the request reaches the limiter and upstream asynchronously (the
 * key hash runs on the thread pool). Bounded by 5 s of real time, not a turn count a busy machine
 * runs through before the hash is back.
 */
async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  throw new Error('the condition never held');
}

describe('429 rate_limit_exceeded through the endpoint (manual clock)', () => {
  it('free: admits a burst of 7 at once, refuses the 8th with Retry-After 1, admits one more a second later', async () => {
    const t = await limitsSetup();
    for (let i = 0; i < 7; i++) expect((await t.chat()).status).toBe(200);
    await expectRefusal(await t.chat(), 'rate_limit_exceeded', '1');
    t.clock.advance(999);
    await expectRefusal(await t.chat(), 'rate_limit_exceeded', '1');
    t.clock.advance(1);
    expect((await t.chat()).status).toBe(200);
    await expectRefusal(await t.chat(), 'rate_limit_exceeded', '1');
    expect(t.fake.requests).toHaveLength(8);
  });

  for (const [plan, burst, intervalMs] of [
    ['plus', 13, 500],
    ['pro', 61, 100],
    ['max', 61, 100],
  ] as [Plan, number, number][]) {
    it(`${plan}: burst ${burst}, then one request every ${intervalMs} ms`, async () => {
      const t = await limitsSetup({ plan });
      // A body the validator refuses is cheap and still counts: every request counts.
      for (let i = 0; i < burst; i++) expect((await t.post('/v1/chat/completions', '{}')).status).toBe(400);
      await expectRefusal(await t.post('/v1/chat/completions', '{}'), 'rate_limit_exceeded', '1');
      t.clock.advance(intervalMs - 1);
      expect((await t.post('/v1/chat/completions', '{}')).status).toBe(429);
      t.clock.advance(1);
      expect((await t.post('/v1/chat/completions', '{}')).status).toBe(400);
      expect((await t.post('/v1/chat/completions', '{}')).status).toBe(429);
    });
  }

  it('consumes nothing for a refused request: hammering while refused does not push the next admission back', async () => {
    const t = await limitsSetup();
    for (let i = 0; i < 7; i++) expect((await t.chat()).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await t.chat()).status).toBe(429);
    t.clock.advance(1_000);
    expect((await t.chat()).status).toBe(200);
  });

  it('shares one budget among all keys of an account, and its app users', async () => {
    const target = { accountId: '' };
    const t = await limitsSetup({
      authenticate: async (token): Promise<AppPrincipal | undefined> =>
        token === 'app-user' ? { accountId: target.accountId, funding: 'included' } : undefined,
    });
    target.accountId = t.accountId;
    const second = await t.store.createKey(t.accountId, 'second');
    const other = { authorization: `Bearer ${second.key}` };
    const app = { authorization: 'Bearer app-user' };
    for (let i = 0; i < 3; i++) expect((await t.chat()).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await t.chat(other)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await t.chat(app)).status).toBe(200);
    await expectRefusal(await t.chat(), 'rate_limit_exceeded', '1');
    await expectRefusal(await t.chat(other), 'rate_limit_exceeded', '1');
    await expectRefusal(await t.chat(app), 'rate_limit_exceeded', '1');
    // Another account is untouched.
    const stranger = await t.store.createAccount({ plan: 'free' });
    await t.store.addCredits(stranger.id, 1_000_000);
    const strangerKey = await t.store.createKey(stranger.id, 'k');
    expect((await t.chat({ authorization: `Bearer ${strangerKey.key}` })).status).toBe(200);
  });

  it('GET /v1/models has its own 60 a minute (burst 7) and leaves the plan budget alone', async () => {
    const t = await limitsSetup();
    for (let i = 0; i < 7; i++) expect((await t.get('/v1/models')).status).toBe(200);
    await expectRefusal(await t.get('/v1/models'), 'rate_limit_exceeded', '1');
    for (let i = 0; i < 7; i++) expect((await t.chat()).status).toBe(200);
    await expectRefusal(await t.chat(), 'rate_limit_exceeded', '1');
    t.clock.advance(1_000);
    expect((await t.get('/v1/models')).status).toBe(200);
    await expectRefusal(await t.get('/v1/models'), 'rate_limit_exceeded', '1');
    expect((await t.chat()).status).toBe(200);
  });

  it('a rate-refused request takes no in-flight slot', async () => {
    const t = await limitsSetup();
    for (let i = 0; i < 7; i++) expect((await t.post('/v1/chat/completions', '{}')).status).toBe(400);
    const first = await t.stream();
    expect(first.status).toBe(429);
    expect(await t.inFlight()).toBe(0);
  });
});

describe('429 concurrency_limit_exceeded and slot release', () => {
  it("refuses a third request while two streams hold the free plan's slots, with Retry-After 1", async () => {
    const t = await limitsSetup();
    const one = await t.stream();
    const two = await t.stream();
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(await t.inFlight()).toBe(2);
    await expectRefusal(await t.chat(), 'concurrency_limit_exceeded', '1');
    await expectRefusal(await t.stream(), 'concurrency_limit_exceeded', '1');
    // Listing models needs no slot.
    expect((await t.get('/v1/models')).status).toBe(200);
    expect(await t.inFlight()).toBe(2);
    await one.body!.cancel();
    await two.body!.cancel();
    await t.gateway.idle();
  });

  it('a request its slot refuses consumes no rate: the burst left is still there when the slots come free', async () => {
    const t = await limitsSetup({ maxInFlight: 2 });
    const one = await t.stream();
    const two = await t.stream();
    // Refused by the account's slots, then (another account taking the service's last slot) by the service's.
    for (let i = 0; i < 5; i++) await expectRefusal(await t.chat(), 'concurrency_limit_exceeded', '1');
    const other = await t.store.createAccount({ plan: 'pro' });
    await t.store.addCredits(other.id, 1_000_000);
    const otherKey = await t.store.createKey(other.id, 'k');
    await one.body!.cancel();
    await expect.poll(() => t.inFlight()).toBe(1);
    const three = await t.stream({ authorization: `Bearer ${otherKey.key}` });
    expect(three.status).toBe(200);
    for (let i = 0; i < 3; i++) await expectRefusal(await t.chat(), 'server_busy', '1');
    await two.body!.cancel();
    await three.body!.cancel();
    await t.gateway.idle();
    // Two of the burst of 7 went to the streams; the eight refusals took nothing: five more now, then refused.
    for (let i = 0; i < 5; i++) expect((await t.chat()).status).toBe(200);
    await expectRefusal(await t.chat(), 'rate_limit_exceeded', '1');
  });

  it("shares the in-flight slots among the account's keys and its app users", async () => {
    const target = { accountId: '' };
    const t = await limitsSetup({
      authenticate: async (token): Promise<AppPrincipal | undefined> =>
        token === 'app-user' ? { accountId: target.accountId, funding: 'included' } : undefined,
    });
    target.accountId = t.accountId;
    const second = await t.store.createKey(t.accountId, 'second');
    const app = await t.stream({ authorization: 'Bearer app-user' });
    const keyed = await t.stream({ authorization: `Bearer ${second.key}` });
    expect([app.status, keyed.status]).toEqual([200, 200]);
    await expectRefusal(await t.chat(), 'concurrency_limit_exceeded', '1');
    await expectRefusal(await t.chat({ authorization: 'Bearer app-user' }), 'concurrency_limit_exceeded', '1');
    await app.body!.cancel();
    await keyed.body!.cancel();
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
  });

  it('gives the slot back after success, before the reply reaches the client', async () => {
    const t = await limitsSetup();
    const response = await t.chat();
    expect(response.status).toBe(200);
    expect(await t.inFlight()).toBe(0);
    expect(t.time.pending).toBe(0);
  });

  it('has given the slot back when the reply arrives, even from a store whose release takes a while', async () => {
    const inner = memoryLimiter();
    // Like Redis: the release lands a moment after it was sent.
    const slow: LimiterStore = { ...inner, release: (keys, leaseId) => new Promise((resolve) => setTimeout(() => resolve(inner.release(keys, leaseId)), 5)) };
    const t = await limitsSetup({ limiter: slow });
    for (let i = 0; i < 3; i++) expect((await t.chat()).status).toBe(200);
    expect(await inner.inFlight(limiterKeys.flight(t.accountId), t.clock.now())).toBe(0);
  });

  it('gives the slot back after an upstream error and after refusals inside the handler', async () => {
    const t = await limitsSetup({ fakeOptions: { faults: [{ kind: 'status', status: 500 }, { kind: 'refuse' }] } });
    const failedCall = await t.chat();
    expect(failedCall.status).toBe(502);
    expect(failedCall.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await t.inFlight()).toBe(0);
    const refusedStream = await t.stream();
    expect(refusedStream.status).toBe(502);
    expect(await t.inFlight()).toBe(0);
    expect((await t.chat({}, chatBody({ model: 'smart' }))).status).toBe(403);
    expect((await t.post('/v1/chat/completions', '{"model":')).status).toBe(400);
    expect(await t.inFlight()).toBe(0);
    expect(t.time.pending).toBe(0);
    // Both slots are free: two streams open side by side.
    const streams = [await t.stream(), await t.stream()];
    expect(streams.map((response) => response.status)).toEqual([200, 200]);
    for (const response of streams) await response.body!.cancel();
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
  });

  it('gives the slot back when an adapter breaks its contract on a stream', async () => {
    // An adapter that breaks its contract: the stream it returns is no stream.
    const broken: Provider = {
      kind: 'broken',
      zeroDataRetention: false,
      chat: async () => {
        throw new Error('unused');
      },
      chatStream: async () => ({}) as never,
    };
    const t = await limitsSetup({ providers: { local: broken }, models: testModels().filter((model) => model.type === 'chat') });
    const response = await t.stream();
    expect(response.status).toBe(502);
    expect((await response.json()).error.code).toBe('upstream_error');
    expect(await t.inFlight()).toBe(0);
    expect(t.gateway.active).toBe(0);
    expect(t.time.pending).toBe(0);
    expect(t.logs.map((record) => record.code)).toEqual(['upstream_error']);
  });

  it('gives the slot back when the client cancels a stream', async () => {
    const t = await limitsSetup();
    const one = await t.stream();
    const two = await t.stream();
    await expectRefusal(await t.chat(), 'concurrency_limit_exceeded', '1');
    const reader = one.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    await until(async () => (await t.inFlight()) === 1);
    expect((await t.chat()).status).toBe(200);
    await two.body!.cancel();
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
    expect(t.time.pending).toBe(0);
    expect(t.fake.open).toBe(0);
  });

  it('gives the slot back when a stream ends, and when it fails after it started', async () => {
    let calls = 0;
    const t = await limitsSetup({ fakeOptions: { faults: () => (++calls === 2 ? { kind: 'cut', afterChunks: 2 } : undefined) } });
    const ends = await t.stream();
    const fails = await t.stream();
    await expectRefusal(await t.chat(), 'concurrency_limit_exceeded', '1');
    const done = await readEvents(ends);
    expect(done.data.at(-1)).toBe('[DONE]');
    const failed = await readEvents(fails);
    expect(failed.data.at(-1)).not.toBe('[DONE]');
    expect(JSON.parse(failed.data.at(-1)!).error.code).toBe('upstream_error');
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
    expect(t.time.pending).toBe(0);
    expect((await t.chat()).status).toBe(200);
  });
});

describe('503 server_busy and limiter store failures', () => {
  it('refuses past maxInFlight with server_busy and Retry-After 1, across accounts', async () => {
    const t = await limitsSetup({ maxInFlight: 1 });
    const open = await t.stream();
    expect(open.status).toBe(200);
    await expectRefusal(await t.chat(), 'server_busy', '1');
    const other = await t.store.createAccount({ plan: 'pro' });
    await t.store.addCredits(other.id, 1_000_000);
    const key = await t.store.createKey(other.id, 'k');
    await expectRefusal(await t.chat({ authorization: `Bearer ${key.key}` }), 'server_busy', '1');
    expect(await t.limiter.inFlight(limiterKeys.serviceFlight(), t.clock.now())).toBe(1);
    await open.body!.cancel();
    await t.gateway.idle();
    expect((await t.chat({ authorization: `Bearer ${key.key}` })).status).toBe(200);
  });

  const broken = (): LimiterStore => {
    const down = () => Promise.reject(new Error('limiter store down'));
    return { rate: down, acquire: down, extend: down, release: down, inFlight: down };
  };

  it('answers 503 service_unavailable when the limiter store fails (closed by default)', async () => {
    const t = await limitsSetup({ limiter: broken() });
    await expectRefusal(await t.chat(), 'service_unavailable', '1');
    await expectRefusal(await t.get('/v1/models'), 'service_unavailable', '1');
    expect(t.fake.requests).toHaveLength(0);
    expect(t.logs.map((record) => record.code)).toEqual(['service_unavailable', 'service_unavailable']);
  });

  it('admits when the limiter store fails with onLimiterError open', async () => {
    const t = await limitsSetup({ limiter: broken(), onLimiterError: 'open' });
    expect((await t.chat()).status).toBe(200);
    expect((await t.get('/v1/models')).status).toBe(200);
    const streamed = await t.stream();
    expect(streamed.status).toBe(200);
    expect((await readEvents(streamed)).data.at(-1)).toBe('[DONE]');
    await t.gateway.idle();
    expect(t.time.pending).toBe(0);
  });
});

describe('lease extension: long requests keep their slot', () => {
  it("keeps an open stream's slot past many lease TTLs, then frees it and its timer", async () => {
    const t = await limitsSetup({ holdTtlMs: 30_000, streamIdleTimeoutMs: 3_600_000 });
    const one = await t.stream();
    const two = await t.stream();
    t.time.advanceNow(120_000); // four TTLs: without extension both leases would have expired
    expect(await t.inFlight()).toBe(2);
    await expectRefusal(await t.chat(), 'concurrency_limit_exceeded', '1');
    t.time.advanceNow(29_000);
    expect(await t.inFlight()).toBe(2);
    await one.body!.cancel();
    await two.body!.cancel();
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
    expect(t.time.pending).toBe(0);
  });

  it("keeps a slow non-streamed call's slot too, from admission to reply", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const t = await limitsSetup({ holdTtlMs: 30_000, fakeOptions: { latencyMs: 1, sleep: () => gate } });
    const pending = t.chat();
    await until(async () => t.fake.requests.length === 1);
    t.time.advanceNow(100_000);
    expect(await t.inFlight()).toBe(1);
    open();
    expect((await pending).status).toBe(200);
    expect(await t.inFlight()).toBe(0);
    expect(t.time.pending).toBe(0);
  });

  it("lets a crashed holder's slot come back after one TTL (no extension without the gateway)", async () => {
    const t = await limitsSetup({ holdTtlMs: 30_000, streamIdleTimeoutMs: 3_600_000 });
    await t.stream();
    await t.stream();
    // Simulate the instance dying: its timers never run, only the clock moves.
    t.clock.advance(30_000);
    expect(await t.inFlight()).toBe(0);
  });
});

describe('search and fetch limits through their endpoints', () => {
  const searchModel: ModelConfig = { id: 'web', type: 'search', provider: 'web', upstream: 'web', micros_per_call: 1_000 } as ModelConfig;
  const searchProvider: Provider = {
    kind: 'stub-search',
    zeroDataRetention: false,
    search: async (request) => [{ title: `About ${request.query}`, url: 'https://example.com/', snippet: 'A page.' }],
  };
  const pageFetcher: PageFetcher = {
    fetch: async (request) => ({
      ok: true,
      page: {
        object: 'page',
        url: request.url,
        final_url: request.url,
        status: 200,
        title: null,
        content_type: 'text/plain',
        content: 'hi',
        truncated: false,
      },
    }),
  };
  const searchSetup = (options: SetupOptions = {}) =>
    limitsSetup({ models: [searchModel], providers: { web: searchProvider }, pageFetcher, plan: 'pro', ...options });
  const search = (t: Awaited<ReturnType<typeof searchSetup>>, headers: Record<string, string> = {}) => t.post('/v1/search', { query: 'tollgate' }, headers);
  const fetchPage = (t: Awaited<ReturnType<typeof searchSetup>>, headers: Record<string, string> = {}) =>
    t.post('/v1/fetch', { url: 'https://example.com/' }, headers);

  it('limits search and fetch to 30 a minute each (burst 4, Retry-After 2), refusals consuming nothing', async () => {
    const t = await searchSetup();
    for (let i = 0; i < 4; i++) expect((await search(t)).status).toBe(200);
    await expectRefusal(await search(t), 'rate_limit_exceeded', '2');
    for (let i = 0; i < 4; i++) expect((await fetchPage(t)).status).toBe(200);
    await expectRefusal(await fetchPage(t), 'rate_limit_exceeded', '2');
    t.clock.advance(1_000);
    await expectRefusal(await search(t), 'rate_limit_exceeded', '1');
    t.clock.advance(1_000);
    expect((await search(t)).status).toBe(200);
    expect((await fetchPage(t)).status).toBe(200);
  });

  it('refuses past the service-wide search + fetch limit with 503 upstream_busy, consuming nothing of the account', async () => {
    const t = await searchSetup({ sharedSearchFetchPerMinute: 60 });
    for (let i = 0; i < 4; i++) expect((await search(t)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await fetchPage(t)).status).toBe(200);
    const other = await t.store.createAccount({ plan: 'free' });
    await t.store.addCredits(other.id, 1_000_000);
    const key = { authorization: `Bearer ${(await t.store.createKey(other.id, 'k')).key}` };
    await expectRefusal(await search(t, key), 'upstream_busy', '1');
    await expectRefusal(await fetchPage(t, key), 'upstream_busy', '1');
    for (let i = 0; i < 10; i++) expect((await search(t, key)).status).toBe(503);
    t.clock.advance(1_000);
    expect((await fetchPage(t, key)).status).toBe(200);
    await expectRefusal(await search(t, key), 'upstream_busy', '1');
    // Once the service is idle again, the other account has its whole burst of 4 searches: the
    // refusals took nothing from its search or plan limits.
    t.clock.advance(7_000);
    for (let i = 0; i < 4; i++) expect((await search(t, key)).status).toBe(200);
    await expectRefusal(await search(t, key), 'rate_limit_exceeded', '2');
  });
});
