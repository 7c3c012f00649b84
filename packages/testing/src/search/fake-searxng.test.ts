import { describe, expect, it } from 'vitest';
import { fakeSearxng } from './fake-searxng';

describe('fakeSearxng', () => {
  it("answers format=json with SearXNG's reply shape, the same for the same query", async () => {
    const upstream = fakeSearxng({ resultsPerPage: 3 });
    const response = await upstream.fetch('http://searxng.local/search?q=hello+world&format=json');
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'application/json']);
    const body = await response.json();
    expect(Object.keys(body)).toEqual(['query', 'number_of_results', 'results', 'answers', 'corrections', 'infoboxes', 'suggestions', 'unresponsive_engines']);
    expect(body.query).toBe('hello world');
    expect(body.results).toHaveLength(3);
    expect(body.results[0]).toMatchObject({
      title: 'hello world - result 1',
      content: expect.stringContaining('hello world'),
      engine: expect.any(String),
      template: 'default.html',
      category: 'general',
      positions: [1, 2],
      publishedDate: expect.stringMatching(/^2024-\d{2}-\d{2}T\d{2}:00:00$/),
    });
    expect(body.results[1].publishedDate).toBeNull();
    const again = await (await upstream.fetch('http://searxng.local/search?q=hello+world&format=json')).json();
    expect(again).toEqual(body);
    const page2 = await (await upstream.fetch('http://searxng.local/search?q=hello+world&format=json&pageno=2')).json();
    expect(page2.results[0].title).toBe('hello world - result 4');
    expect(upstream.requests.map((request) => request.method)).toEqual(['GET', 'GET', 'GET']);
    expect(upstream.open).toBe(0);
  });

  it('answers a POST form like a GET', async () => {
    const response = await fakeSearxng().fetch('http://searxng.local/search', {
      method: 'POST',
      body: new URLSearchParams({ q: 'x', format: 'json' }),
    });
    expect((await response.json()).query).toBe('x');
  });

  it('refuses a format that is not enabled with 403, and no query with 400', async () => {
    const upstream = fakeSearxng({ formats: ['html'] });
    const forbidden = await upstream.fetch('http://searxng.local/search?q=x&format=json');
    expect([forbidden.status, await forbidden.text()]).toEqual([403, expect.stringContaining('<title>403 Forbidden</title>')]);
    const noQuery = await fakeSearxng().fetch('http://searxng.local/search?format=json');
    expect([noQuery.status, await noQuery.json()]).toEqual([400, { error: 'No query' }]);
  });

  it('injects status faults with Retry-After, refusals and stalls, and counts open bodies', async () => {
    const upstream = fakeSearxng({ faults: [{ kind: 'status', status: 429, retryAfter: 5 }, { kind: 'refuse' }, { kind: 'stall', afterChunks: 0 }] });
    const busy = await upstream.fetch('http://searxng.local/search?q=x&format=json');
    expect([busy.status, busy.headers.get('retry-after'), await busy.text()]).toEqual([429, '5', 'Too Many Requests']);
    await expect(upstream.fetch('http://searxng.local/search?q=x&format=json')).rejects.toThrow('fetch failed');
    const stalled = await upstream.fetch('http://searxng.local/search?q=x&format=json');
    expect(upstream.open).toBe(1);
    await stalled.body!.cancel();
    expect(upstream.open).toBe(0);
    expect(upstream.requests).toHaveLength(2);
  });
});
