import { fakeSearxng } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { searxng } from './searxng';

const call = { upstream: 'searxng' };

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

describe('searxng', () => {
  it('asks GET /search?q=…&format=json and normalises the results, cut to max_results', async () => {
    const upstream = fakeSearxng();
    const provider = searxng({ baseURL: 'http://searxng.local:8080/', fetch: upstream.fetch, headers: { 'x-real-ip': '10.0.0.1' } });
    const results = await provider.search!({ query: 'tollgate gateway', max_results: 3 }, call);
    expect(results).toHaveLength(3);
    expect(results[0]).toEqual({
      title: 'tollgate gateway - result 1',
      url: expect.stringMatching(/^https:\/\/tollgate-gateway-\d\.example\.com\/tollgate-gateway\/1$/),
      snippet: 'Result 1 of the fake index for tollgate gateway: a page that talks about tollgate gateway.',
      published_at: expect.stringMatching(/^2024-\d{2}-\d{2}T\d{2}:00:00Z$/),
    });
    expect(results[1]).not.toHaveProperty('published_at');
    expect(upstream.requests).toHaveLength(1);
    const request = upstream.requests[0]!;
    expect(request.method).toBe('GET');
    expect(request.url).toBe('http://searxng.local:8080/search?q=tollgate+gateway&format=json&pageno=1');
    expect(request.headers).toMatchObject({ accept: 'application/json', 'x-real-ip': '10.0.0.1' });
    expect(request.headers).not.toHaveProperty('authorization');
    expect(upstream.open).toBe(0);
  });

  it('is deterministic per query and returns at most one page', async () => {
    const upstream = fakeSearxng({ resultsPerPage: 12 });
    const provider = searxng({ baseURL: 'http://searxng.local', fetch: upstream.fetch });
    const first = await provider.search!({ query: 'q', max_results: 20 }, call);
    const second = await provider.search!({ query: 'q', max_results: 20 }, call);
    expect(first).toHaveLength(12);
    expect(second).toEqual(first);
  });

  it('sends apiKey as a Bearer token and keeps only http(s) results', async () => {
    const upstream = fakeSearxng({
      results: () => [
        { title: '  ', url: 'https://a.example/', content: 'A', publishedDate: '2024-02-03T04:05:06+02:00' },
        { title: 'Gopher', url: 'gopher://b.example/', content: 'B', publishedDate: null },
        { title: 'C', url: 'http://c.example/', content: 'C', publishedDate: 'yesterday' },
      ],
    });
    const provider = searxng({ baseURL: 'http://searxng.local', apiKey: 'proxy-secret', fetch: upstream.fetch });
    expect(await provider.search!({ query: 'x', max_results: 10 }, call)).toEqual([
      { title: 'https://a.example/', url: 'https://a.example/', snippet: 'A', published_at: '2024-02-03T02:05:06Z' },
      { title: 'C', url: 'http://c.example/', snippet: 'C' },
    ]);
    expect(upstream.requests[0]!.headers.authorization).toBe('Bearer proxy-secret');
  });

  it.each([
    [429, 7, 'upstream_busy', false, 7],
    [503, 3, 'upstream_unavailable', false, 3],
    [500, undefined, 'upstream_error', true, undefined],
    [502, undefined, 'upstream_error', true, undefined],
    [403, undefined, 'upstream_error', false, undefined],
    [401, undefined, 'upstream_error', false, undefined],
    [400, undefined, 'invalid_request', false, undefined],
  ])('maps status %i to a ProviderError', async (status, retryAfter, code, accepted, expectedRetry) => {
    const upstream = fakeSearxng({ faults: [{ kind: 'status', status, retryAfter, body: 'secret upstream body' }] });
    const provider = searxng({ baseURL: 'http://searxng.local', fetch: upstream.fetch });
    const error = await failure(provider.search!({ query: 'x', max_results: 5 }, call));
    expect([error.code, error.status, error.accepted, error.retryAfter]).toEqual([code, status, accepted, expectedRetry]);
    expect(error.message).toBe(`upstream failed: ${code} (status ${status})`);
  });

  it('maps a disabled json format (403) to upstream_error', async () => {
    const provider = searxng({ baseURL: 'http://searxng.local', fetch: fakeSearxng({ formats: ['html'] }).fetch });
    const error = await failure(provider.search!({ query: 'x', max_results: 5 }, call));
    expect([error.code, error.status, error.accepted]).toEqual(['upstream_error', 403, false]);
  });

  it('maps a refused connection to upstream_unavailable, not accepted', async () => {
    const provider = searxng({ baseURL: 'http://searxng.local', fetch: fakeSearxng({ faults: [{ kind: 'refuse' }] }).fetch });
    const error = await failure(provider.search!({ query: 'x', max_results: 5 }, call));
    expect([error.code, error.status, error.accepted]).toEqual(['upstream_unavailable', undefined, false]);
  });

  it('maps a malformed or cut body to upstream_error', async () => {
    const upstream = fakeSearxng({
      faults: [
        { kind: 'malformed', afterChunks: 0 },
        { kind: 'cut', afterChunks: 0 },
      ],
    });
    const provider = searxng({ baseURL: 'http://searxng.local', fetch: upstream.fetch });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const error = await failure(provider.search!({ query: 'x', max_results: 5 }, call));
      expect([error.code, error.accepted]).toEqual(['upstream_error', true]);
    }
  });

  it('maps an aborted call to upstream_error', async () => {
    const controller = new AbortController();
    controller.abort();
    const provider = searxng({ baseURL: 'http://searxng.local', fetch: fakeSearxng().fetch });
    const error = await failure(provider.search!({ query: 'x', max_results: 5 }, { ...call, signal: controller.signal }));
    expect([error.code, error.accepted]).toEqual(['upstream_error', true]);
  });

  it('needs a baseURL', () => {
    expect(() => searxng({})).toThrow('searxng: baseURL is required (the self-hosted instance)');
  });
});
