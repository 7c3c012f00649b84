/**
 * Deadlines and aborts against an upstream that takes the request and never answers (the fakes'
 * `hang` fault; one test on a real TCP socket): the client gets the spec's error within the
 * deadline, a stream gets its 200 and keepalives meanwhile, and a client that leaves frees its
 * in-flight slot and its hold at once. Every endpoint family (chat, Responses, images, search,
 * fetch) ends at the documented default deadline (5 min headers + 5 min body) on the gateway's own
 * timers, its hold renewed until then; so do Responses over a native upstream, a streamed
 * Responses request and a tee model's whole reply (each deadline apart). Manual time, so nothing
 * waits for real.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { errorRecord } from '@tollgate/core';
import { openaiCompatible, type PageFetcher, type Provider, searxng } from '@tollgate/providers';
import { fakeSearxng } from '@tollgate/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CHAT_PRICE, chatBody, type SetupOptions, setup, type TestGateway, testModels, UPSTREAM_KEY } from '../test/test-harness';
import { expectNothingLeft, settled } from '../test/test-leaks';
import { stepReader } from '../test/test-sse';
import { flush, type ManualTimers, manualClock, manualTimers } from '../test/test-timers';

const START = 10_000_000;
const DEADLINES = { upstreamHeadersTimeoutMs: 10_000, upstreamBodyTimeoutMs: 20_000, keepaliveMs: 1_000 };

interface HangGateway extends TestGateway {
  time: ManualTimers;
  /** Sends a request with a client signal the test can abort. */
  send(path: string, body: unknown, signal?: AbortSignal): Promise<Response>;
  /** Resolves once `count` requests reached the upstream (the key hash runs on the thread pool first). */
  reached(count: number): Promise<void>;
}

const opened: HangGateway[] = [];

/** A gateway on manual time whose upstream takes every request and never answers. */
async function hanging(options: SetupOptions & { search?: typeof fetch } = {}): Promise<HangGateway> {
  const { search, ...rest } = options;
  const clock = manualClock();
  const time = manualTimers(clock);
  let harness: TestGateway | undefined;
  // The harness's own fake behind `local`, bound late: it exists once setup returns.
  const local = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: (input, init) => harness!.fake.fetch(input, init) });
  const providers: Record<string, Provider> = search ? { local, web: searxng({ baseURL: 'http://searxng.test', fetch: search }) } : { local };
  const t = await setup({ clock, timers: time.timers, ...DEADLINES, providers, fakeOptions: { faults: () => ({ kind: 'hang' }) }, ...rest });
  harness = t;
  const send = (path: string, body: unknown, signal?: AbortSignal) =>
    t.gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      }),
    );
  const reached = async (count: number) => {
    await expect.poll(() => t.fake.requests.length, { timeout: 5_000 }).toBe(count);
    await flush();
  };
  const h = { ...t, time, send, reached };
  opened.push(h);
  return h;
}

/** Moves manual time in steps until `promise` settles (at most `ms`); returns whether it did. */
async function within<T>(time: ManualTimers, promise: Promise<T>, ms: number, stepMs = 500): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let waited = 0; waited < ms && !done; waited += stepMs) await time.advance(stepMs);
  await flush();
  return done;
}

afterEach(async () => {
  for (const h of opened.splice(0)) {
    await settled(h);
    await flush();
    expect(h.fake.hanging).toBe(0);
    await expectNothingLeft(h, h.time);
  }
});

describe('an upstream that takes the request and never answers', () => {
  it('non-streamed chat: 502 upstream_error once the headers and body deadlines passed, nothing charged', async () => {
    const h = await hanging();
    const pending = h.post('/v1/chat/completions', chatBody());
    await h.reached(1);
    expect(await within(h.time, pending, 29_500)).toBe(false);
    expect(await h.inFlight()).toBe(1);
    expect((await h.balance()).held).toBeGreaterThan(0);
    expect(await within(h.time, pending, 500)).toBe(true);
    const response = await pending;
    expect(response.status).toBe(502);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await response.json()).toEqual(errorRecord('upstream_error'));
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
    expect(h.logs.at(-1)).toMatchObject({ status: 502, code: 'upstream_error', costMicros: 0 });
  });

  it('streamed chat: the 200 and keepalives on schedule, then the error event at the headers deadline, nothing charged', async () => {
    const h = await hanging();
    const pending = h.post('/v1/chat/completions', chatBody({ stream: true }));
    await h.reached(1);
    expect(await within(h.time, pending, 1_000, 250)).toBe(true);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = stepReader(response);
    const event = reader.take(1);
    await h.time.advance(1_000);
    await flush();
    expect(reader.comments).toEqual([': keepalive']);
    expect(await within(h.time, event, 8_000)).toBe(true);
    expect(JSON.parse((await event)[0] ?? '')).toEqual(errorRecord('upstream_error'));
    expect(reader.comments.length).toBeGreaterThanOrEqual(8);
    await expect(reader.take(1)).rejects.toThrow('the stream ended after 0 of 1 events');
    await settled(h);
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
    expect(h.logs.at(-1)).toMatchObject({ status: 200, stream: true, code: 'upstream_error', outcome: 'upstream_failed', costMicros: 0 });
  });

  it('streamed chat with a headers deadline inside the first keepalive interval: the error has its own status', async () => {
    const h = await hanging({ upstreamHeadersTimeoutMs: 600 });
    const pending = h.post('/v1/chat/completions', chatBody({ stream: true }));
    await h.reached(1);
    expect(await within(h.time, pending, 1_000, 100)).toBe(true);
    const response = await pending;
    expect(response.status).toBe(502);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await response.json()).toEqual(errorRecord('upstream_error'));
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
  });

  it('images and search: 502 upstream_error once the deadlines passed, nothing charged', async () => {
    const searx = fakeSearxng({ faults: () => ({ kind: 'hang' }) });
    const h = await hanging({
      models: [
        { id: 'painter', type: 'image', provider: 'local', price: { micros_per_image: 40_000, micros_per_reference: 0 } },
        { id: 'web', type: 'search', provider: 'web', micros_per_call: 1_000 },
      ],
      search: searx.fetch,
    });
    const image = h.post('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse' });
    const search = h.post('/v1/search', { query: 'tollgate' });
    await h.reached(1);
    await expect.poll(() => searx.hanging, { timeout: 5_000 }).toBe(1);
    expect(await within(h.time, Promise.all([image, search]), 30_000)).toBe(true);
    for (const response of [await image, await search]) {
      expect(response.status).toBe(502);
      expect(await response.json()).toEqual(errorRecord('upstream_error'));
    }
    expect(searx.hanging).toBe(0);
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});

describe('a client that leaves while the upstream has not answered', () => {
  it('streamed chat: the upstream is aborted and the slot and hold are free at once, before any timer runs', async () => {
    const h = await hanging();
    const client = new AbortController();
    const pending = h.send('/v1/chat/completions', chatBody({ stream: true }), client.signal);
    await h.reached(1);
    expect(await h.inFlight()).toBe(1);
    client.abort();
    await pending.then((response) => response.body?.cancel());
    await settled(h);
    expect(h.fake.hanging).toBe(0);
    expect(await h.inFlight()).toBe(0);
    expect((await h.balance()).held).toBe(0);
    expect(h.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone', completionTokens: 0 });
  });

  it('images and search: nothing charged, slot and hold free at once', async () => {
    const searx = fakeSearxng({ faults: () => ({ kind: 'hang' }) });
    const h = await hanging({
      plan: 'plus',
      models: [
        { id: 'painter', type: 'image', provider: 'local', price: { micros_per_image: 40_000, micros_per_reference: 0 } },
        { id: 'web', type: 'search', provider: 'web', micros_per_call: 1_000 },
      ],
      search: searx.fetch,
    });
    const client = new AbortController();
    const image = h.send('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse' }, client.signal);
    const search = h.send('/v1/search', { query: 'tollgate' }, client.signal);
    await h.reached(1);
    await expect.poll(() => searx.hanging, { timeout: 5_000 }).toBe(1);
    expect(await h.inFlight()).toBe(2);
    expect((await h.balance()).held).toBe(41_000);
    client.abort();
    await Promise.all([image, search]);
    await settled(h);
    expect(searx.hanging).toBe(0);
    expect(await h.inFlight()).toBe(0);
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});

describe('on a real socket that accepts and never answers', () => {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
  });

  it('answers 502 after the deadline (non-streamed) and an error event after a 200 with keepalives (streamed), on real timers', async () => {
    let received = 0;
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', () => void received++);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const t = await setup({
      clock: { now: Date.now, advance: () => undefined }, // real time: the deadlines run on real timers here
      providers: { local: openaiCompatible({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: UPSTREAM_KEY }) },
      upstreamHeadersTimeoutMs: 600,
      upstreamBodyTimeoutMs: 200,
      keepaliveMs: 100,
    });
    const startedAt = performance.now();
    const whole = await t.post('/v1/chat/completions', chatBody());
    expect(whole.status).toBe(502);
    expect(performance.now() - startedAt).toBeLessThan(5_000);
    const streamed = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text.startsWith(': keepalive\n\n')).toBe(true);
    expect(text.endsWith(`data: ${JSON.stringify(errorRecord('upstream_error'))}\n\n`)).toBe(true);
    expect(received).toBeGreaterThanOrEqual(2);
    await settled(t);
    expect(await t.inFlight()).toBe(0);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});

describe('every endpoint family at the documented defaults (5 min headers + 5 min body), on the gateway’s own timers', () => {
  /** The default whole-call deadline of a non-streamed upstream call (docs/architecture.md, Deadlines). */
  const WHOLE_CALL = 10 * 60_000;
  const DEFAULTS = { upstreamHeadersTimeoutMs: undefined, upstreamBodyTimeoutMs: undefined, keepaliveMs: undefined, holdTtlMs: 60_000 };
  const signals: AbortSignal[] = [];
  const pageFetcher: PageFetcher = {
    fetch: (_request, options) => {
      if (options?.signal) signals.push(options.signal);
      return new Promise(() => {}); // never answers; only its signal tells it to stop
    },
  };
  const cases: { name: string; path: string; body: Record<string, unknown>; message?: string }[] = [
    { name: 'chat', path: '/v1/chat/completions', body: chatBody() },
    { name: 'responses', path: '/v1/responses', body: { model: 'fast', input: 'Hello there' } },
    { name: 'images', path: '/v1/images/generations', body: { model: 'painter', prompt: 'a lighthouse' } },
    { name: 'search', path: '/v1/search', body: { query: 'tollgate' } },
    { name: 'fetch', path: '/v1/fetch', body: { url: 'https://example.com/' }, message: 'The page could not be fetched.' },
  ];
  for (const { name, path, body, message } of cases) {
    it(`${name}: 502 upstream_error at 10 minutes and not a moment before, the hold kept meanwhile and then released, nothing charged`, async () => {
      signals.length = 0;
      const searx = fakeSearxng({ faults: () => ({ kind: 'hang' }) });
      const h = await hanging({
        ...DEFAULTS,
        plan: 'pro',
        models: [...testModels(), { id: 'web', type: 'search', provider: 'web', micros_per_call: 1_000 }],
        search: searx.fetch,
        pageFetcher,
        fetchMicrosPerCall: 700,
      });
      const pending = h.post(path, body);
      await expect.poll(() => h.fake.hanging + searx.hanging + signals.length, { timeout: 5_000 }).toBe(1);
      await flush();
      const held = (await h.balance()).held;
      expect(held).toBeGreaterThan(0);
      // Ten hold TTLs pass: the hold is renewed all along (a sweep takes nothing of it).
      for (let step = 0; step < 10; step++) {
        const minute = WHOLE_CALL / 10 - (step === 9 ? 1 : 0);
        expect(await within(h.time, pending, minute, minute)).toBe(false);
        expect(await h.store.releaseExpired()).toBe(0);
        expect((await h.balance()).held).toBe(held);
      }
      expect(await within(h.time, pending, 1, 1)).toBe(true);
      const response = await pending;
      expect(response.status).toBe(502);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      expect(await response.json()).toEqual(errorRecord('upstream_error', message));
      expect(h.fake.hanging + searx.hanging).toBe(0);
      expect(signals.every((signal) => signal.aborted)).toBe(true);
      expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
      expect((await h.store.entries(h.accountId)).filter((entry) => entry.kind === 'charge')).toEqual([]);
      expect(h.logs.at(-1)).toMatchObject({ status: 502, code: 'upstream_error', costMicros: 0 });
    });
  }
});

describe('the paths the families above do not take', () => {
  it('Responses over a native Responses upstream, non-streamed: 502 upstream_error at the whole-call deadline, nothing charged', async () => {
    let harness: TestGateway | undefined;
    const native = openaiCompatible({
      baseURL: 'http://upstream.test/v1',
      apiKey: UPSTREAM_KEY,
      responsesApi: true,
      fetch: (input, init) => harness!.fake.fetch(input, init),
    });
    const h = await hanging({ providers: { local: native } });
    harness = h;
    const pending = h.post('/v1/responses', { model: 'fast', input: 'Hello there' });
    await h.reached(1);
    expect(h.fake.requests[0]?.url).toMatch(/\/responses$/);
    expect(await within(h.time, pending, 29_500)).toBe(false);
    expect(await within(h.time, pending, 500)).toBe(true);
    const response = await pending;
    expect(response.status).toBe(502);
    expect(await response.json()).toEqual(errorRecord('upstream_error'));
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
  });

  it('Responses, streamed: the 200, keepalives, then the upstream_error event at the headers deadline, nothing charged', async () => {
    const h = await hanging();
    const pending = h.post('/v1/responses', { model: 'fast', input: 'Hello there', stream: true });
    await h.reached(1);
    expect(await within(h.time, pending, 1_000, 250)).toBe(true);
    const response = await pending;
    expect(response.status).toBe(200);
    const text = response.text();
    expect(await within(h.time, text, 8_750, 250)).toBe(false);
    expect(await within(h.time, text, 1_000, 250)).toBe(true);
    const wire = await text;
    expect(wire).toContain(': keepalive');
    expect(wire).toContain('upstream_error');
    await settled(h);
    expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
    expect(h.logs.at(-1)).toMatchObject({ status: 200, code: 'upstream_error', costMicros: 0 });
  });

  for (const { name, fault, ms } of [
    { name: 'no headers', fault: { kind: 'hang' } as const, ms: DEADLINES.upstreamHeadersTimeoutMs },
    { name: 'headers, then no body', fault: { kind: 'stall', afterChunks: 0 } as const, ms: DEADLINES.upstreamBodyTimeoutMs },
  ]) {
    it(`a tee model's whole reply, ${name}: 502 upstream_error at that deadline, nothing charged`, async () => {
      let harness: TestGateway | undefined;
      const enclave = openaiCompatible({
        baseURL: 'http://upstream.test/v1',
        apiKey: UPSTREAM_KEY,
        fetch: (input, init) => harness!.fake.fetch(input, init),
        attest: async () => undefined,
      });
      const vault = {
        id: 'vault',
        type: 'chat',
        tier: 'tee',
        provider: 'enclave',
        upstream: 'gpt-4o-mini',
        max_output_tokens: 1_000,
        price: CHAT_PRICE,
      } as const;
      const h = await hanging({ providers: { enclave }, models: [vault], fakeOptions: { faults: () => fault } });
      harness = h;
      const pending = h.post('/v1/chat/completions', chatBody({ model: 'vault' }));
      await h.reached(1);
      // A body that never comes: its deadline counts from the headers, which came at once.
      expect(await within(h.time, pending, ms - 500)).toBe(false);
      expect(await within(h.time, pending, 500)).toBe(true);
      const response = await pending;
      expect(response.status).toBe(502);
      expect(await response.json()).toEqual(errorRecord('upstream_error'));
      expect(await h.balance()).toEqual({ balance: START, held: 0, available: START });
      expect(h.fake.open).toBe(0);
    });
  }
});
