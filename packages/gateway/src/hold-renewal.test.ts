/**
 * Long requests (issue #19; checkpoints.ts, docs/architecture.md, Billing): a hold outlives any
 * request. The gateway renews every live hold of its own — every metered request from its hold to
 * its settle or release, streamed or not, on every endpoint — every third of the hold TTL, in one
 * store call for all of them, so that while the instance lives another instance's
 * `releaseExpired` sweep takes nothing of them, and only the holds of a dead instance expire.
 * Manual time, and a hold TTL of 2 s, so an upstream of 6 s is three TTLs long.
 */
import { type HoldCheckpoint, memoryStore, type Store } from '@tollgate/billing';
import type { ModelConfig } from '@tollgate/core';
import { openaiCompatible, type PageFetcher, searxng } from '@tollgate/providers';
import { fakeOpenAI, fakeSearxng } from '@tollgate/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody, setup, type TestGateway, testModels, UPSTREAM_KEY } from '../test/test-harness';
import { charges, expectNothingLeft, settled } from '../test/test-leaks';
import { stepReader } from '../test/test-sse';
import { flush, type ManualClock, manualClock, type ManualTimers, manualTimers } from '../test/test-timers';
import { CHECKPOINT_INTERVAL_MS, renewalIntervalMs } from './checkpoints';

const TTL = 2_000;
/** An upstream three hold TTLs long. */
const LONG = 3 * TTL;
/** Deadlines well past the upstream's length: only the hold's expiry could cut these requests. */
const OPTIONS = {
  holdTtlMs: TTL,
  upstreamHeadersTimeoutMs: 60_000,
  upstreamBodyTimeoutMs: 60_000,
  streamIdleTimeoutMs: 60_000,
  keepaliveMs: 1_000,
};
const SEARCH_PRICE = 1_000;
const FETCH_PRICE = 700;
const PAGE = {
  object: 'page' as const,
  url: 'https://example.com/',
  final_url: 'https://example.com/',
  status: 200,
  title: 'Example',
  content_type: 'text/html',
  content: '# Example',
  truncated: false,
};

interface LongGateway extends TestGateway {
  time: ManualTimers;
  /** Every `store.checkpoint` call (renewals and checkpoints), in order. */
  calls: HoldCheckpoint[][];
  /** Upstream waits armed so far (chat, images, search, fetch alike). */
  readonly waits: number;
  /** Sends a request with a client signal the test can abort. */
  send(path: string, body: unknown, signal?: AbortSignal): Promise<Response>;
}

const opened: LongGateway[] = [];

/**
 * A gateway on manual time whose upstreams (chat and images, search, page fetch) each take `LONG`
 * before they answer, or drip a stream's events `LONG` apart; its store records checkpoint calls
 * and can be made to fail settles.
 */
async function longGateway(options: { drip?: boolean; store?: (store: Store) => Store } = {}): Promise<LongGateway> {
  const clock: ManualClock = manualClock();
  const time = manualTimers(clock);
  let waits = 0;
  const sleep = (ms: number, signal: AbortSignal) => {
    waits++;
    return time.sleep(ms, signal);
  };
  const base = memoryStore({ now: clock.now });
  const calls: HoldCheckpoint[][] = [];
  const recording: Store = {
    ...base,
    async checkpoint(entries) {
      calls.push(entries.map((entry) => ({ ...entry })));
      return base.checkpoint?.(entries) ?? 0;
    },
  };
  const store = options.store ? options.store(recording) : recording;
  const upstream = fakeOpenAI(options.drip ? { faults: () => ({ kind: 'drip', delayMs: LONG }), sleep } : { latencyMs: LONG, sleep });
  const search = fakeSearxng({ latencyMs: LONG, sleep });
  const pageFetcher: PageFetcher = {
    fetch: async (_request, fetchOptions) => {
      await sleep(LONG, fetchOptions?.signal ?? new AbortController().signal);
      return { ok: true, page: PAGE };
    },
  };
  const models: ModelConfig[] = [...testModels(), { id: 'web', type: 'search', provider: 'web', micros_per_call: SEARCH_PRICE }];
  const t = await setup({
    clock,
    timers: time.timers,
    store,
    plan: 'pro',
    models,
    providers: {
      local: openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: upstream.fetch }),
      web: searxng({ baseURL: 'http://searxng.test', fetch: search.fetch }),
    },
    pageFetcher,
    fetchMicrosPerCall: FETCH_PRICE,
    ...OPTIONS,
  });
  const send = (path: string, body: unknown, signal?: AbortSignal) =>
    t.gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      }),
    );
  const h: LongGateway = {
    ...t,
    fake: upstream,
    time,
    calls,
    send,
    get waits() {
      return waits;
    },
  };
  opened.push(h);
  return h;
}

/** Waits (in real time) until `count` upstream waits are armed: the request reached its upstream. */
async function reached(h: LongGateway, count: number): Promise<void> {
  await expect.poll(() => h.waits, { timeout: 5_000 }).toBeGreaterThanOrEqual(count);
  await flush();
}

/**
 * Moves manual time in `stepMs` steps until `promise` settles, at most `ms`; after each step a
 * sweep of expired holds runs, as another instance's would, and must take nothing. Returns the
 * time it took.
 */
async function sweepingUntil(h: LongGateway, promise: Promise<unknown>, ms: number, stepMs = 250): Promise<number> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  let waited = 0;
  while (!done && waited < ms) {
    await h.time.advance(stepMs);
    waited += stepMs;
    expect(await h.store.releaseExpired(), `a sweep at ${waited} ms took a live hold`).toBe(0);
  }
  // Work that takes real time (an image encoded) may still be finishing: wait for it, time stopped.
  await expect.poll(() => done, { timeout: 5_000, message: `still pending after ${ms} ms` }).toBe(true);
  await flush();
  return waited;
}

afterEach(async () => {
  for (const h of opened.splice(0)) {
    await settled(h);
    await flush();
    await expectNothingLeft(h, h.time);
  }
});

describe('a non-streamed request three hold TTLs long keeps its hold to the end, on every endpoint', () => {
  const cases: { name: string; path: string; body: Record<string, unknown>; price?: number }[] = [
    { name: 'chat', path: '/v1/chat/completions', body: chatBody() },
    { name: 'responses', path: '/v1/responses', body: { model: 'fast', input: 'Hello there' } },
    { name: 'images', path: '/v1/images/generations', body: { model: 'painter', prompt: 'a lighthouse' }, price: 40_000 },
    { name: 'search', path: '/v1/search', body: { query: 'tollgate' }, price: SEARCH_PRICE },
    { name: 'fetch', path: '/v1/fetch', body: { url: 'https://example.com/' }, price: FETCH_PRICE },
  ];
  for (const { name, path, body, price } of cases) {
    it(`${name}: held all along, no sweep takes it, settled exactly once`, async () => {
      const h = await longGateway();
      const pending = h.post(path, body);
      await reached(h, 1);
      const held = (await h.balance()).held;
      expect(held).toBeGreaterThan(0);
      const took = await sweepingUntil(h, pending, LONG + 1_000);
      expect(took).toBeGreaterThanOrEqual(LONG);
      const response = await pending;
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      const requestId = response.headers.get('x-request-id');
      const paid = await charges(h);
      expect(paid).toEqual([expect.objectContaining({ kind: 'charge', requestId })]);
      expect(paid[0]?.meta).not.toEqual({ outcome: 'checkpoint' });
      if (price !== undefined) expect(paid[0]?.micros).toBe(-price);
      // Renewed with nothing delivered: one hold, 0 micros, the gateway's TTL, every third of it.
      const renewals = h.calls.filter((call) => call.length > 0);
      expect(renewals.length).toBeGreaterThanOrEqual(Math.floor(LONG / renewalIntervalMs(TTL)));
      for (const call of renewals) expect(call).toEqual([{ holdId: paid[0]?.holdId, micros: 0, ttlMs: TTL }]);
      // Ended: renewed no more.
      const after = h.calls.length;
      await h.time.advance(3 * TTL);
      expect(h.calls).toHaveLength(after);
    });
  }
});

describe('a stream silent for longer than the hold TTL (keepalives only)', () => {
  for (const { name, path, body } of [
    { name: 'chat', path: '/v1/chat/completions', body: chatBody({ stream: true }) },
    { name: 'responses', path: '/v1/responses', body: { model: 'fast', input: 'Hello there', stream: true } },
  ]) {
    it(`${name}: keeps its hold through every silence and is settled exactly once, not by a sweep`, async () => {
      const h = await longGateway({ drip: true });
      const pending = h.post(path, body);
      await reached(h, 1);
      const started = await sweepingUntil(h, pending, 2_000);
      expect(started).toBeLessThanOrEqual(OPTIONS.keepaliveMs + 250);
      const stream = await pending;
      expect(stream.status).toBe(200);
      const text = stream.text();
      // Every event of the upstream comes 6 s (three TTLs) after the last, keepalives in between.
      const took = await sweepingUntil(h, text, 20 * LONG, 500);
      expect(took).toBeGreaterThanOrEqual(2 * LONG);
      const wire = await text;
      expect(wire).toContain(': keepalive');
      expect(wire.split(': keepalive').length - 1).toBeGreaterThanOrEqual(2 * (LONG / OPTIONS.keepaliveMs));
      await settled(h);
      const paid = await charges(h);
      expect(paid).toEqual([expect.objectContaining({ requestId: stream.headers.get('x-request-id') })]);
      expect(paid[0]?.meta).not.toEqual({ outcome: 'checkpoint' });
      // Renewed all along, through silences of three TTLs, never more than a third of a TTL apart.
      expect(h.calls.length).toBeGreaterThanOrEqual(Math.floor(took / renewalIntervalMs(TTL)));
    });
  }
});

describe('renewal', () => {
  it('writes all live holds of the instance in one store call per renewal', async () => {
    const h = await longGateway();
    const pending = [h.post('/v1/chat/completions', chatBody()), h.post('/v1/search', { query: 'a' }), h.post('/v1/fetch', { url: 'https://example.com/' })];
    await reached(h, 3);
    await sweepingUntil(h, Promise.all(pending), LONG + 1_000);
    const holdIds = (await charges(h)).map((entry) => entry.holdId).sort();
    expect(holdIds).toHaveLength(3);
    const renewals = h.calls.filter((call) => call.length > 0);
    expect(renewals.length).toBeGreaterThanOrEqual(Math.floor(LONG / renewalIntervalMs(TTL)));
    // While all three lived, each renewal was one call with all three.
    const full = renewals.filter((call) => call.length === 3);
    expect(full.length).toBeGreaterThanOrEqual(Math.floor(LONG / renewalIntervalMs(TTL)) - 1);
    for (const call of full) expect(call.map((entry) => entry.holdId).sort()).toEqual(holdIds);
    for (const response of await Promise.all(pending)) await response.arrayBuffer();
  });

  it('stops with the request: a hold whose settle failed is renewed no more, and expires', async () => {
    let failSettles = true;
    const h = await longGateway({
      store: (store) => ({
        ...store,
        settle: (holdId, input) => (failSettles ? Promise.reject(new Error('store down')) : store.settle(holdId, input)),
      }),
    });
    const pending = h.post('/v1/search', { query: 'tollgate' });
    await reached(h, 1);
    await sweepingUntil(h, pending, LONG + 2_000);
    const response = await pending;
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    // Its settle failed four times: the request ended with its hold still open, no longer renewed.
    expect((await h.balance()).held).toBe(SEARCH_PRICE);
    const after = h.calls.length;
    await h.time.advance(TTL); // the instance lives on (its timers fire), the request does not
    expect(h.calls).toHaveLength(after);
    expect(await h.store.releaseExpired()).toBe(1);
    expect((await h.balance()).held).toBe(0);
    // The settle retried in the background, once the store is back, still charges it once.
    failSettles = false;
    await h.time.advance(2 * TTL);
    expect(await charges(h)).toEqual([expect.objectContaining({ micros: -SEARCH_PRICE })]);
  });

  it('dies with its instance: holds it no longer renews expire, and releaseExpired closes them', async () => {
    const h = await longGateway();
    const client = new AbortController();
    // A stream that delivered something and then stalls: its checkpoint is what it is charged.
    h.fake.setFaults(() => ({ kind: 'stall', afterChunks: 3 }));
    const streamPending = h.send('/v1/chat/completions', chatBody({ stream: true }), client.signal);
    await reached(h, 1);
    await sweepingUntil(h, streamPending, 2_000);
    const stream = stepReader(await streamPending);
    await sweepingUntil(h, stream.take(2), LONG + 1_000);
    // And a search still waiting on its upstream.
    const search = h.send('/v1/search', { query: 'tollgate' }, client.signal);
    await reached(h, 2);
    await h.time.advance(2 * TTL);
    expect(await h.store.releaseExpired()).toBe(0);
    expect((await h.balance()).held).toBeGreaterThan(SEARCH_PRICE);
    const checkpointed = h.calls.flat().reduce((most, entry) => Math.max(most, entry.micros), 0);
    expect(checkpointed).toBeGreaterThan(0);
    // The instance dies: none of its timers fires again, while the clock goes on past the TTL.
    h.clock.advance(TTL + CHECKPOINT_INTERVAL_MS);
    expect(await h.store.releaseExpired()).toBe(2);
    expect((await h.balance()).held).toBe(0);
    expect(await charges(h)).toEqual([expect.objectContaining({ micros: -checkpointed, meta: { outcome: 'checkpoint' } })]);
    // Clean-up: the clients leave; nothing more is charged.
    client.abort();
    await stream.cancel().catch(() => undefined);
    await search;
    await settled(h);
    expect(await charges(h)).toHaveLength(1);
  });
});
