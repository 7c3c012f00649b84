import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode, type ModelConfig, type Plan } from '@tollgate/core';
import { memoryLimiter } from '@tollgate/limiter';
import { limiterKeys } from '@tollgate/limiter/store-kit';
import { brave, createPageFetcher, searxng, type PageFetcher, type PageFetcherOptions, type PageTransportRequest } from '@tollgate/providers';
import { fakeBrave, fakeSearchHits, fakeSearxng } from '@tollgate/testing';
import { listen, type Listening } from '@tollgate/testing/server';
import { setup, type SetupOptions, type TestGateway } from '../test/test-harness';

const PRICE = 1_234;
const FETCH_PRICE = 777;
const PUBLIC = '93.184.215.14';
const NOT_PUBLIC = 'url must point to a public address; its host is a private, local or reserved address.';

/** Search models: the first is the default; one for plus accounts, one free, one on Brave. */
const SEARCH_MODELS: ModelConfig[] = [
  { id: 'web', type: 'search', provider: 'searxng', upstream: 'searxng', included: { from: 'plus', quota: 'web_calls' }, micros_per_call: PRICE },
  { id: 'web-brave', type: 'search', provider: 'brave', upstream: 'brave', micros_per_call: PRICE },
  { id: 'web-plus', type: 'search', provider: 'searxng', upstream: 'searxng', plan: 'plus', micros_per_call: PRICE },
  { id: 'web-free', type: 'search', provider: 'searxng', upstream: 'searxng', micros_per_call: 0 },
];

/** A gate a fake's `sleep` waits on, so a test holds requests in flight without real time. */
function gate() {
  let open: () => void = () => {};
  let promise = new Promise<void>((resolve) => (open = resolve));
  return {
    wait: () => promise,
    open() {
      open();
      promise = Promise.resolve();
    },
  };
}

/** DNS and pages the injected resolver and transport serve; every call is recorded, no socket opened. */
function pageWorld(extra: Partial<PageFetcherOptions> = {}) {
  const dns: Record<string, string[]> = {
    'example.com': [PUBLIC],
    'internal.example': ['10.0.0.5'],
    'rebind.example': [PUBLIC, '192.168.1.10'],
  };
  const pages: Record<string, () => Response> = {
    'https://example.com/article': () =>
      new Response(
        '<html><head><title>An article</title><script>steal()</script></head><body><nav>menu</nav>' +
          '<main><h1>Hello</h1><p>Some <strong>bold</strong> text and <a href="/next">a link</a>.</p></main></body></html>',
        { headers: { 'content-type': 'text/html; charset=utf-8' } },
      ),
    'https://example.com/to-private': () => new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }),
    'https://example.com/to-internal': () => new Response(null, { status: 301, headers: { location: 'http://internal.example/admin' } }),
  };
  const lookups: string[] = [];
  const connections: { url: string; address: string }[] = [];
  const fetcher = createPageFetcher({
    resolve: async (hostname) => {
      lookups.push(hostname);
      const addresses = dns[hostname];
      if (!addresses) throw new Error('ENOTFOUND');
      return addresses;
    },
    transport: async (request: PageTransportRequest) => {
      connections.push({ url: request.url.href, address: request.address });
      const page = pages[request.url.href];
      if (!page) throw new TypeError('connect ECONNREFUSED');
      return page();
    },
    ...extra,
  });
  return { fetcher, lookups, connections };
}

interface World extends TestGateway {
  searx: ReturnType<typeof fakeSearxng>;
  braveUpstream: ReturnType<typeof fakeBrave>;
  pages: ReturnType<typeof pageWorld>;
  search(body: unknown, headers?: Record<string, string>): Promise<Response>;
  fetchPage(body: unknown, headers?: Record<string, string>): Promise<Response>;
}

async function world(options: SetupOptions & { searxGate?: ReturnType<typeof gate> } = {}): Promise<World> {
  const { searxGate, ...rest } = options;
  const searx = fakeSearxng(searxGate ? { latencyMs: 1, sleep: () => searxGate.wait() } : {});
  const braveUpstream = fakeBrave({ apiKey: 'brave-secret' });
  const pages = pageWorld();
  const t = await setup({
    models: SEARCH_MODELS,
    providers: {
      searxng: searxng({ baseURL: 'http://searxng.test', fetch: searx.fetch }),
      brave: brave({ apiKey: 'brave-secret', baseURL: 'http://brave.test/res/v1', fetch: braveUpstream.fetch }),
    },
    pageFetcher: pages.fetcher,
    fetchMicrosPerCall: FETCH_PRICE,
    credits: 1_000_000,
    ...rest,
  });
  return {
    ...t,
    searx,
    braveUpstream,
    pages,
    search: (body, headers) => t.post('/v1/search', body, headers),
    fetchPage: (body, headers) => t.post('/v1/fetch', body, headers),
  };
}

/** Asserts a JSON error reply; `started` says whether it carries X-Request-Id and X-Funding. */
async function expectError(response: Response, code: ErrorCode, options: { message?: string | RegExp; started?: boolean; retryAfter?: string | null } = {}) {
  const entry = ERROR_CATALOGUE[code];
  const body = (await response.json()) as { error: { message: string } };
  expect(response.status).toBe(entry.status);
  expect(body).toEqual({ error: { message: expect.any(String), type: entry.type, param: null, code } });
  if (options.message instanceof RegExp) expect(body.error.message).toMatch(options.message);
  else expect(body.error.message).toBe(options.message ?? entry.message);
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(response.headers.get('x-service-version')).toBe('tollgate/test');
  expect(response.headers.get('retry-after')).toBe(options.retryAfter ?? null);
  if (options.started) {
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
  } else {
    expect(response.headers.get('x-request-id')).toBeNull();
    expect(response.headers.get('x-funding')).toBeNull();
  }
}

/** Asserts the account paid nothing and holds nothing. */
async function expectUncharged(t: World, balance = 1_000_000) {
  expect(await t.balance()).toEqual({ balance, held: 0, available: balance });
}

describe('POST /v1/search through gateway.fetch', () => {
  it('answers with the first search model by default: 10 results (docs/http-api.md, POST /v1/search), charged the per-call price exactly', async () => {
    const t = await world();
    const response = await t.search({ query: 'tollgate gateway' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(response.headers.get('x-service-version')).toBe('tollgate/test');
    const body = (await response.json()) as { results: Record<string, unknown>[] };
    const hits = fakeSearchHits('tollgate gateway', 0, 10);
    expect(body).toEqual({
      object: 'search.results',
      model: 'web',
      query: 'tollgate gateway',
      results: hits.map((hit) => ({
        title: hit.title,
        url: hit.url,
        snippet: hit.content,
        ...(hit.publishedDate ? { published_at: `${hit.publishedDate}Z` } : {}),
      })),
    });
    expect(Object.keys(body.results[0]!)).toEqual(['title', 'url', 'snippet', 'published_at']);
    expect(Object.keys(body.results[1]!)).toEqual(['title', 'url', 'snippet']);
    expect(t.searx.requests).toHaveLength(1);
    expect(new URL(t.searx.requests[0]!.url).searchParams.get('q')).toBe('tollgate gateway');
    expect(await t.balance()).toEqual({ balance: 1_000_000 - PRICE, held: 0, available: 1_000_000 - PRICE });
    expect(t.logs.at(-1)).toMatchObject({ path: '/v1/search', status: 200, model: 'web', provider: 'searxng', costMicros: PRICE, funding: 'credits' });
  });

  it('honours max_results (1, 20) and the chosen model', async () => {
    const t = await world();
    const one = (await (await t.search({ query: 'q', max_results: 1 })).json()) as { results: unknown[] };
    expect(one.results).toHaveLength(1);
    // SearXNG gives one page (12 here): max_results is a most, not a promise.
    const many = (await (await t.search({ query: 'q', max_results: 20 })).json()) as { results: unknown[] };
    expect(many.results).toHaveLength(12);
    const viaBrave = await t.search({ model: 'web-brave', query: 'q', max_results: 20 });
    const braveBody = (await viaBrave.json()) as { model: string; results: { url: string }[] };
    expect(braveBody.model).toBe('web-brave');
    expect(braveBody.results).toHaveLength(20);
    expect(new URL(t.braveUpstream.requests[0]!.url).searchParams.get('count')).toBe('20');
    expect(t.braveUpstream.requests[0]!.headers['x-subscription-token']).toBe('brave-secret');
    expect((await t.balance()).balance).toBe(1_000_000 - 3 * PRICE);
  });

  it.each([
    ['a missing query', {}, 'invalid_request_body', 'query is required.'],
    ['an empty query', { query: '' }, 'invalid_parameter', /^query/],
    ['a query that is not a string', { query: 7 }, 'invalid_request_body', /^query/],
    ['max_results 0', { query: 'q', max_results: 0 }, 'invalid_parameter', 'max_results must be an integer from 1 to 20.'],
    ['max_results 21', { query: 'q', max_results: 21 }, 'invalid_parameter', 'max_results must be an integer from 1 to 20.'],
    ['max_results 1.5', { query: 'q', max_results: 1.5 }, 'invalid_parameter', 'max_results must be an integer from 1 to 20.'],
    ['an unlisted field', { query: 'q', page: 2 }, 'invalid_parameter', 'page is not a field of this endpoint.'],
  ] as const)('refuses %s before the request starts, charging nothing', async (_name, body, code, message) => {
    const t = await world();
    await expectError(await t.search(body), code, { message });
    expect(t.searx.requests).toHaveLength(0);
    await expectUncharged(t);
  });

  it('refuses an unknown model (and a chat-only id) with 404 model_not_found', async () => {
    const t = await world();
    await expectError(await t.search({ model: 'nope', query: 'q' }), 'model_not_found');
    await expectError(await t.search({ model: 'fast', query: 'q' }), 'model_not_found');
    expect(t.searx.requests).toHaveLength(0);
    await expectUncharged(t);
  });

  it('refuses a model above the account plan with 403 model_requires_plan, and serves it on plus', async () => {
    const t = await world();
    await expectError(await t.search({ model: 'web-plus', query: 'q' }), 'model_requires_plan');
    await expectUncharged(t);
    const plus = await world({ plan: 'plus' });
    expect((await plus.search({ model: 'web-plus', query: 'q' })).status).toBe(200);
  });

  it('serves with exactly the price left, then refuses with 402 (and with a negative balance even when free)', async () => {
    const t = await world({ credits: PRICE });
    expect((await t.search({ query: 'q' })).status).toBe(200);
    expect(await t.balance()).toEqual({ balance: 0, held: 0, available: 0 });
    await expectError(await t.search({ query: 'q' }), 'insufficient_balance');
    // A free search model still needs a balance that is not negative (spec Billing 6).
    expect((await t.search({ model: 'web-free', query: 'q' })).status).toBe(200);
    const hold = await t.store.hold(t.accountId, { micros: 0, ttlMs: 60_000 });
    if (!hold.ok) throw new Error('hold refused');
    await t.store.settle(hold.value.holdId, { micros: 5 });
    await expectError(await t.search({ model: 'web-free', query: 'q' }), 'insufficient_balance');
    expect(t.searx.requests).toHaveLength(2);
    expect(await t.balance()).toEqual({ balance: -5, held: 0, available: -5 });
  });

  it('maps an upstream 429 to 503 upstream_busy with its Retry-After, releasing the hold', async () => {
    const t = await world();
    t.searx.setFaults([{ kind: 'status', status: 429, retryAfter: 7 }]);
    await expectError(await t.search({ query: 'q' }), 'upstream_busy', { started: true, retryAfter: '7' });
    await expectUncharged(t);
    // Brave sends no Retry-After: its X-RateLimit-Reset is used.
    t.braveUpstream.setFaults([{ kind: 'status', status: 429, retryAfter: 3 }]);
    await expectError(await t.search({ model: 'web-brave', query: 'q' }), 'upstream_busy', { started: true, retryAfter: '3' });
    await expectUncharged(t);
    expect(t.logs.at(-1)).toMatchObject({ status: 503, code: 'upstream_busy', costMicros: 0 });
  });

  it('maps a refused connection to 502 upstream_unavailable and any other failure to 502 upstream_error, charging nothing', async () => {
    const t = await world();
    t.searx.setFaults([{ kind: 'refuse' }, { kind: 'status', status: 500 }, { kind: 'malformed', afterChunks: 0 }]);
    await expectError(await t.search({ query: 'q' }), 'upstream_unavailable', { started: true });
    await expectError(await t.search({ query: 'q' }), 'upstream_error', { started: true });
    await expectError(await t.search({ query: 'q' }), 'upstream_error', { started: true });
    await expectUncharged(t);
    expect((await t.search({ query: 'q' })).status).toBe(200);
  });

  it('limits search to 30 a minute per account (burst 4): 429 with Retry-After, nothing charged', async () => {
    const t = await world({ plan: 'pro' });
    for (let i = 0; i < 4; i++) expect((await t.search({ query: 'q' })).status).toBe(200);
    await expectError(await t.search({ query: 'q' }), 'rate_limit_exceeded', { retryAfter: '2' });
    expect((await t.balance()).balance).toBe(1_000_000 - 4 * PRICE);
    t.clock.advance(2_000);
    expect((await t.search({ query: 'q' })).status).toBe(200);
  });

  it('refuses past the shared search + fetch limit with 503 upstream_busy and Retry-After', async () => {
    const t = await world({ plan: 'pro', sharedSearchFetchPerMinute: 60 });
    // Burst of the shared limit: 1 + 60/10 = 7, search and fetch together.
    for (let i = 0; i < 4; i++) expect((await t.search({ query: 'q' })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await t.fetchPage({ url: 'https://example.com/article' })).status).toBe(200);
    await expectError(await t.search({ query: 'q' }), 'rate_limit_exceeded', { retryAfter: '2' });
    await expectError(await t.fetchPage({ url: 'https://example.com/article' }), 'upstream_busy', { retryAfter: '1' });
    expect((await t.balance()).balance).toBe(1_000_000 - 4 * PRICE - 3 * FETCH_PRICE);
  });

  it("counts searches and fetches in the plan's requests a minute", async () => {
    const run = async (plan: Plan) => {
      const t = await world({ plan });
      for (let i = 0; i < 4; i++) expect((await t.fetchPage({ url: 'https://example.com/article' })).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await t.search({ query: 'q' })).status).toBe(200);
      return t.search({ query: 'q' });
    };
    // Free: burst 7 spent (the search limit has one left), so the plan refuses.
    await expectError(await run('free'), 'rate_limit_exceeded', { retryAfter: '1' });
    expect((await run('pro')).status).toBe(200);
  });

  it('counts searches and fetches in requests in flight', async () => {
    const searxGate = gate();
    const t = await world({ searxGate });
    const first = t.search({ query: 'a' });
    const second = t.search({ query: 'b' });
    await waitFor(() => t.searx.requests.length === 2);
    expect(t.gateway.active).toBe(2);
    await expectError(await t.search({ query: 'c' }), 'concurrency_limit_exceeded', { retryAfter: '1' });
    await expectError(await t.fetchPage({ url: 'https://example.com/article' }), 'concurrency_limit_exceeded', { retryAfter: '1' });
    searxGate.open();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await t.fetchPage({ url: 'https://example.com/article' })).status).toBe(200);
    expect((await t.balance()).balance).toBe(1_000_000 - 2 * PRICE - FETCH_PRICE);
  });
});

describe('a client that leaves', () => {
  it('pays nothing for a search or fetch it abandoned, and frees its slot', async () => {
    const searxGate = gate();
    const limiter = memoryLimiter();
    const stalled = gate();
    let transported = 0;
    const { fetcher } = pageWorld({
      transport: async (request) => {
        transported++;
        await Promise.race([stalled.wait(), new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)))]);
        return new Response('late', { headers: { 'content-type': 'text/plain' } });
      },
    });
    const t = await world({ searxGate, limiter, pageFetcher: fetcher });
    const send = (path: string, body: unknown, signal: AbortSignal) =>
      t.gateway.fetch(
        new Request(`http://gateway.test${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${t.key}` },
          body: JSON.stringify(body),
          signal,
        }),
      );
    const leaving = new AbortController();
    const search = send('/v1/search', { query: 'q' }, leaving.signal);
    const page = send('/v1/fetch', { url: 'https://example.com/article' }, leaving.signal);
    // Both must be at their upstream (each hashes its key on the thread pool first, in either order).
    await waitFor(() => t.searx.requests.length === 1 && transported === 1);
    expect((await t.balance()).held).toBe(PRICE + FETCH_PRICE);
    leaving.abort();
    searxGate.open();
    await expectError(await search, 'upstream_error', { started: true });
    await expectError(await page, 'upstream_error', { started: true, message: 'The fetch was cancelled.' });
    await expectUncharged(t);
    expect(await limiter.inFlight(limiterKeys.flight(t.accountId), t.clock.now())).toBe(0);
  });
});

/**
 * Waits until `ready()` holds: the gateway reaches the upstream asynchronously (the key hash runs on
 * the thread pool). Bounded by 5 s of real time, not a try count a busy machine runs through first.
 */
async function waitFor(ready: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(ready()).toBe(true);
}

describe('POST /v1/fetch through gateway.fetch', () => {
  it('returns the page (docs/http-api.md, POST /v1/fetch) with clean markdown, charged fetchMicrosPerCall exactly', async () => {
    const t = await world();
    const response = await t.fetchPage({ url: 'https://example.com/article#top' });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(await response.json()).toEqual({
      object: 'page',
      url: 'https://example.com/article',
      final_url: 'https://example.com/article',
      status: 200,
      title: 'An article',
      content_type: 'text/html',
      content: '# Hello\n\nSome **bold** text and [a link](https://example.com/next).',
      truncated: false,
    });
    expect(t.pages.connections).toEqual([{ url: 'https://example.com/article', address: PUBLIC }]);
    expect(await t.balance()).toEqual({ balance: 1_000_000 - FETCH_PRICE, held: 0, available: 1_000_000 - FETCH_PRICE });
    expect(t.logs.at(-1)).toMatchObject({ path: '/v1/fetch', status: 200, costMicros: FETCH_PRICE });
  });

  it('returns text when asked, and refuses 402 when the balance cannot hold the price', async () => {
    const t = await world({ credits: FETCH_PRICE });
    const text = (await (await t.fetchPage({ url: 'https://example.com/article', format: 'text' })).json()) as { content: string };
    expect(text.content).toBe('Hello\n\nSome bold text and a link.');
    await expectError(await t.fetchPage({ url: 'https://example.com/article' }), 'insufficient_balance');
    expect(t.pages.connections).toHaveLength(1);
  });

  it.each([
    ['no url', {}, 'url must be an absolute http or https URL.'],
    ['a relative url', { url: '/etc/passwd' }, 'url must be an absolute http or https URL.'],
    ['another scheme', { url: 'file:///etc/passwd' }, 'url must be an absolute http or https URL.'],
    ['a format it does not know', { url: 'https://example.com/', format: 'html' }, 'format must be one of markdown, text.'],
    ['an unlisted field', { url: 'https://example.com/', headers: {} }, 'headers is not a field of this endpoint.'],
  ])('refuses %s with 400 invalid_parameter before the request starts', async (_name, body, message) => {
    const t = await world();
    await expectError(await t.fetchPage(body), 'invalid_parameter', { message });
    expect(t.pages.connections).toEqual([]);
    await expectUncharged(t);
  });

  // [case, url, refused after DNS (so the request had started)]
  it.each([
    ['loopback', 'http://127.0.0.1/', false],
    ['10/8', 'http://10.1.2.3/', false],
    ['172.16/12', 'http://172.20.0.1/', false],
    ['192.168/16', 'http://192.168.0.1/', false],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', false],
    ['100.64/10 (CGNAT)', 'http://100.64.0.1/', false],
    ['[::1]', 'http://[::1]/', false],
    ['[fe80::1]', 'http://[fe80::1]/', false],
    ['::ffff:127.0.0.1', 'http://[::ffff:127.0.0.1]/', false],
    ['2130706433', 'http://2130706433/', false],
    ['0177.0.0.1', 'http://0177.0.0.1/', false],
    ['0x7f.1', 'http://0x7f.1/', false],
    ['a name resolving to a private address', 'http://internal.example/', true],
    ['a name with one private address among public ones', 'https://rebind.example/', true],
    ['a redirect to a private address', 'https://example.com/to-private', true],
    ['a redirect to a name resolving privately', 'https://example.com/to-internal', true],
  ])('refuses %s with 400 invalid_parameter naming url, never connecting to it, charging nothing', async (_name, url, afterDns) => {
    const t = await world();
    const response = await t.fetchPage({ url });
    await expectError(response, 'invalid_parameter', {
      message: afterDns && url.includes('/to-') ? `url redirected to an address that is refused: ${NOT_PUBLIC}` : NOT_PUBLIC,
      started: afterDns,
    });
    // The only connections ever made went to the checked public address.
    for (const connection of t.pages.connections) expect(connection.address).toBe(PUBLIC);
    expect(t.pages.connections).toHaveLength(url.includes('/to-') ? 1 : 0);
    if (!afterDns) expect(t.pages.lookups).toEqual([]);
    await expectUncharged(t);
    expect(t.logs.at(-1)).toMatchObject({ path: '/v1/fetch', status: 400, code: 'invalid_parameter' });
  });

  it('maps a page that cannot be reached to 502 upstream_unavailable, and a throwing fetcher to 502 upstream_error, releasing the hold', async () => {
    const t = await world();
    await expectError(await t.fetchPage({ url: 'https://example.com/missing' }), 'upstream_unavailable', {
      started: true,
      message: 'The page could not be reached.',
    });
    await expectError(await t.fetchPage({ url: 'https://unknown.example/' }), 'upstream_unavailable', {
      started: true,
      message: 'The host of url could not be resolved.',
    });
    await expectUncharged(t);
    const throwing: PageFetcher = {
      fetch: async () => {
        throw new Error('bug');
      },
    };
    const broken = await world({ pageFetcher: throwing });
    await expectError(await broken.fetchPage({ url: 'https://example.com/' }), 'upstream_error', { started: true, message: 'The page could not be fetched.' });
    await expectUncharged(broken);
  });

  it('refuses a literal private address after the hold when the fetcher has no precheck (custom fetchers)', async () => {
    const { fetcher } = pageWorld();
    const t = await world({ pageFetcher: { fetch: (request, options) => fetcher.fetch(request, options) } });
    await expectError(await t.fetchPage({ url: 'http://127.0.0.1/' }), 'invalid_parameter', { message: NOT_PUBLIC, started: true });
    await expectUncharged(t);
  });

  it('is a plain-text 404 when no page fetcher is configured', async () => {
    const t = await world({ pageFetcher: undefined });
    const response = await t.fetchPage({ url: 'https://example.com/article' });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await response.text()).toBe('Not Found');
    expect(response.headers.get('x-request-id')).toBeNull();
    await expectUncharged(t);
  });

  it("counts fetches in the account's fetch limit (30 a minute, burst 4)", async () => {
    const limiter = memoryLimiter();
    const t = await world({ plan: 'pro', limiter });
    for (let i = 0; i < 4; i++) expect((await t.fetchPage({ url: 'https://example.com/article' })).status).toBe(200);
    await expectError(await t.fetchPage({ url: 'https://example.com/article' }), 'rate_limit_exceeded', { retryAfter: '2' });
    // Every slot was freed before its reply.
    expect(await limiter.inFlight(limiterKeys.flight(t.accountId), t.clock.now())).toBe(0);
  });
});

describe('POST /v1/fetch of a real local page (test-only loopback allowance)', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen(async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/redirect') return new Response(null, { status: 302, headers: { location: '/page' } });
      return new Response(
        '<!doctype html><html><head><title>Local page</title><style>p{}</style></head>' +
          '<body><article><h2>Served locally</h2><ul><li>one</li><li>two</li></ul></article></body></html>',
        { headers: { 'content-type': 'text/html; charset=utf-8' } },
      );
    });
  });
  afterAll(() => server?.close());

  it('fetches it over a socket to 127.0.0.1 and returns its markdown', async () => {
    const addresses: string[] = [];
    const fetcher = createPageFetcher({
      resolve: async () => [],
      // A web-standard transport: connect to the checked address, send the URL's Host.
      transport: (request) => {
        addresses.push(request.address);
        return fetch(`http://${request.address}:${request.url.port}${request.url.pathname}${request.url.search}`, {
          headers: request.headers,
          signal: request.signal,
          redirect: 'manual',
        });
      },
      allowAddress: (address) => address === '127.0.0.1',
    });
    const t = await world({ pageFetcher: fetcher });
    const response = await t.fetchPage({ url: `${server.url}/redirect` });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: 'page',
      url: `${server.url}/redirect`,
      final_url: `${server.url}/page`,
      status: 200,
      title: 'Local page',
      content_type: 'text/html',
      content: '## Served locally\n\n-   one\n-   two',
      truncated: false,
    });
    expect(addresses).toEqual(['127.0.0.1', '127.0.0.1']);
    expect((await t.balance()).balance).toBe(1_000_000 - FETCH_PRICE);
    // The allowance is for 127.0.0.1 only: any other private address is still refused before the hold.
    await expectError(await t.fetchPage({ url: 'http://10.0.0.1/' }), 'invalid_parameter', { message: NOT_PUBLIC });
  });
});
