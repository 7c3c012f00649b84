import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeSearchHits, fakeSearxng } from '@tollgate/testing';
import { listen, type Listening } from '@tollgate/testing/server';
import { ENV_SEARCH_MICROS_PER_CALL, loadCatalogue } from './catalogue';
import { ConfigError, loadConfig } from './config';
import { startServer } from './start-server';

const NOT_PUBLIC = 'url must point to a public address; its host is a private, local or reserved address.';
const FETCH_MICROS = 1_000;

/** The results the fake index gives for a query, as the gateway returns them. */
function expectedResults(query: string, count: number) {
  return fakeSearchHits(query, 0, count).map((hit) => ({
    title: hit.title,
    url: hit.url,
    snippet: hit.content,
    ...(hit.publishedDate ? { published_at: `${hit.publishedDate}Z` } : {}),
  }));
}

/** A reference server on a fresh data directory, plus a POST helper with its demo key. */
async function start(env: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-search-'));
  const config = loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir, TOLLGATE_FETCH_MICROS: String(FETCH_MICROS), ...env });
  const server = await startServer(config, { log: () => {} });
  const post = (path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const balance = async () => {
    const found = await server.store.findKey(createHash('sha256').update(server.demoKey!).digest('hex'));
    return server.store.getBalance(found!.account.id);
  };
  const stop = async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { server, post, balance, stop };
}

describe('reference server: POST /v1/search and POST /v1/fetch over HTTP', () => {
  let running: Awaited<ReturnType<typeof start>>;
  let page: Listening;
  const pageHits: string[] = [];

  beforeAll(async () => {
    running = await start();
    page = await listen(async (request) => {
      pageHits.push(request.url);
      return new Response('<html><title>secret</title><p>internal</p></html>', { headers: { 'content-type': 'text/html' } });
    });
  });
  afterAll(async () => {
    await running?.stop();
    await page?.close();
  });

  it("searches with the simulator's sim-search and the demo key, charged its per-call price exactly", async () => {
    const before = await running.balance();
    const response = await running.post('/v1/search', { model: 'sim-search', query: 'tollgate', max_results: 5 });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(response.headers.get('x-service-version')).toBe('tollgate/0.1.0');
    expect(await response.json()).toEqual({ object: 'search.results', model: 'sim-search', query: 'tollgate', results: expectedResults('tollgate', 5) });
    expect((await running.balance()).balance).toBe(before.balance - 5_000);
    // Without a model, the first search model (the simulator's) answers, 10 results by default.
    const byDefault = (await (await running.post('/v1/search', { query: 'tollgate' })).json()) as { model: string; results: unknown[] };
    expect(byDefault.model).toBe('sim-search');
    expect(byDefault.results).toEqual(expectedResults('tollgate', 10));
  });

  it('refuses a search it cannot validate with 400, without X-Request-Id', async () => {
    const response = await running.post('/v1/search', { query: 'q', max_results: 21 });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toBeNull();
    expect(await response.json()).toEqual({
      error: { message: 'max_results must be an integer from 1 to 20.', type: 'invalid_request_error', param: null, code: 'invalid_parameter' },
    });
  });

  it('refuses to fetch a 127.0.0.1 page (no loopback allowance) before holding credit, and never reaches it', async () => {
    const before = await running.balance();
    // Three spellings: the fetch limit's burst is 4 and the next test needs the fourth.
    for (const url of [`${page.url}/`, `http://[::ffff:127.0.0.1]:${page.port}/`, `http://2130706433:${page.port}/`]) {
      const response = await running.post('/v1/fetch', { url });
      expect(response.status).toBe(400);
      expect(response.headers.get('x-request-id')).toBeNull();
      expect(await response.json()).toEqual({ error: { message: NOT_PUBLIC, type: 'invalid_request_error', param: null, code: 'invalid_parameter' } });
    }
    expect(pageHits).toEqual([]);
    expect(await running.balance()).toEqual(before);
  });

  it('refuses localhost after DNS (the request had started: X-Request-Id, hold released, nothing charged)', async () => {
    const before = await running.balance();
    const response = await running.post('/v1/fetch', { url: `http://localhost:${page.port}/` });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(await response.json()).toEqual({ error: { message: NOT_PUBLIC, type: 'invalid_request_error', param: null, code: 'invalid_parameter' } });
    expect(pageHits).toEqual([]);
    expect(await running.balance()).toEqual(before);
  });
});

describe('reference server: search engines from the environment', () => {
  it('adds a web-search model for SEARXNG_URL ahead of sim-search, and serves it over a real SearXNG wire', async () => {
    const upstream = fakeSearxng();
    const searx = await listen(upstream.handle);
    const previous = process.env.SEARXNG_URL;
    // startServer reads the catalogue from process.env.
    process.env.SEARXNG_URL = searx.url;
    let running: Awaited<ReturnType<typeof start>> | undefined;
    try {
      running = await start();
    } finally {
      if (previous === undefined) delete process.env.SEARXNG_URL;
      else process.env.SEARXNG_URL = previous;
    }
    try {
      const models = (await (await fetch(`${running.server.url}/v1/models`, { headers: { authorization: `Bearer ${running.server.demoKey}` } })).json()) as {
        data: Record<string, unknown>[];
      };
      expect(models.data.map((model) => model.id)).toEqual(['sim-fast', 'sim-pro', 'sim-image', 'web-search', 'sim-search']);
      const record = models.data[3]!;
      expect(record).toEqual({
        id: 'web-search',
        object: 'model',
        created: record.created,
        owned_by: 'searxng',
        tier: 'anon',
        type: 'search',
        label: 'Web search',
        plan: 'free',
        included: { from: 'plus', quota: 'web_calls' },
      });
      const before = await running.balance();
      const response = await running.post('/v1/search', { query: 'open source gateway', max_results: 3 });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        object: 'search.results',
        model: 'web-search',
        query: 'open source gateway',
        results: expectedResults('open source gateway', 3),
      });
      expect((await running.balance()).balance).toBe(before.balance - ENV_SEARCH_MICROS_PER_CALL);
      expect(upstream.requests).toHaveLength(1);
      const sent = new URL(upstream.requests[0]!.url);
      expect(sent.pathname).toBe('/search');
      expect(Object.fromEntries(sent.searchParams)).toEqual({ q: 'open source gateway', format: 'json', pageno: '1' });
      // The engine going away is the client's 502, not a charge.
      await searx.close();
      const gone = await running.post('/v1/search', { query: 'q' });
      expect(gone.status).toBe(502);
      expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('upstream_unavailable');
      expect((await running.balance()).balance).toBe(before.balance - ENV_SEARCH_MICROS_PER_CALL);
    } finally {
      await running.stop();
      await searx.close();
    }
  });

  it('routes web-search to SearXNG then Brave when both are set, beside real providers too', () => {
    const both = loadCatalogue(undefined, { SEARXNG_URL: 'http://127.0.0.1:8888', BRAVE_API_KEY: 'brave-key' });
    expect(both.simulator).toBe(true);
    expect(Object.keys(both.providers).sort()).toEqual(['brave', 'searxng', 'simulator', 'simulator-search']);
    expect(both.providers.searxng!.kind).toBe('searxng');
    expect(both.providers.brave!.kind).toBe('brave');
    expect(both.models.find((model) => model.id === 'web-search')).toMatchObject({
      provider: 'searxng',
      routes: [{ provider: 'brave', upstream: 'web-search' }],
    });
    const withChat = loadCatalogue(undefined, { OPENAI_API_KEY: 'sk-test', BRAVE_API_KEY: 'brave-key' });
    expect(withChat.simulator).toBe(false);
    expect(withChat.models.map((model) => model.id)).toEqual(['gpt-4o-mini', 'gpt-4o', 'gpt-image-1', 'web-search']);
    expect(withChat.models.at(-1)).toMatchObject({ provider: 'brave', micros_per_call: ENV_SEARCH_MICROS_PER_CALL });
    expect(withChat.models.at(-1)!.routes).toBeUndefined();
  });

  it('keeps the catalogue as it was without search variables (empty ones count as unset), and refuses a bad SEARXNG_URL', () => {
    expect(loadCatalogue(undefined, {}).models.map((model) => model.id)).toEqual(['sim-fast', 'sim-pro', 'sim-image', 'sim-search']);
    expect(loadCatalogue(undefined, { SEARXNG_URL: '', BRAVE_API_KEY: '' }).models.map((model) => model.id)).toEqual([
      'sim-fast',
      'sim-pro',
      'sim-image',
      'sim-search',
    ]);
    for (const bad of ['searxng.internal:8080', 'ftp://searxng.internal/']) {
      expect(() => loadCatalogue(undefined, { SEARXNG_URL: bad })).toThrow(ConfigError);
      expect(() => loadCatalogue(undefined, { SEARXNG_URL: bad })).toThrow(
        'SEARXNG_URL must be the http(s) address of a SearXNG instance, e.g. http://127.0.0.1:8888',
      );
    }
  });
});
