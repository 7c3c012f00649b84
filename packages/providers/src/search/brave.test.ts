import { fakeBrave } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { brave, braveRetryAfter } from './brave';

const call = { upstream: 'brave' };
const KEY = 'brave-test-key';

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

describe('brave', () => {
  it('asks GET /res/v1/web/search with the key header and normalises the results', async () => {
    const upstream = fakeBrave();
    const provider = brave({ apiKey: KEY, fetch: upstream.fetch, baseURL: 'https://api.search.brave.com/res/v1' });
    const results = await provider.search!({ query: 'tollgate', max_results: 4 }, call);
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({
      title: 'tollgate - result 1',
      url: expect.stringMatching(/^https:\/\/tollgate-\d\.example\.com\/tollgate\/1$/),
      snippet: 'Result 1 of the fake index for tollgate: a page that talks about tollgate.',
      published_at: expect.stringMatching(/^2024-\d{2}-\d{2}T\d{2}:00:00Z$/),
    });
    expect(results[1]).not.toHaveProperty('published_at');
    const request = upstream.requests[0]!;
    expect(request.url).toBe('https://api.search.brave.com/res/v1/web/search?q=tollgate&count=4&text_decorations=false&result_filter=web');
    expect(request.headers).toMatchObject({ accept: 'application/json', 'x-subscription-token': KEY });
  });

  it('defaults baseURL and caps count at 20', async () => {
    const upstream = fakeBrave();
    const results = await brave({ apiKey: KEY, fetch: upstream.fetch }).search!({ query: 'x', max_results: 50 }, call);
    expect(results).toHaveLength(20);
    const url = new URL(upstream.requests[0]!.url);
    expect([url.origin + url.pathname, url.searchParams.get('count')]).toEqual(['https://api.search.brave.com/res/v1/web/search', '20']);
  });

  it('strips highlight tags and entities from titles and snippets', async () => {
    const reply = {
      type: 'search',
      web: {
        type: 'search',
        results: [
          {
            title: 'R&amp;D <b>lab</b>',
            url: 'https://r.example/',
            description: 'Use <strong>this</strong> &#x27;tool&#x27;&nbsp;now',
            page_age: '2023-10-05T12:00:00',
            age: '2 days ago',
          },
          { title: '', url: 'https://s.example/', age: 'yesterday' },
        ],
      },
    };
    const provider = brave({ apiKey: KEY, fetch: async () => Response.json(reply) });
    expect(await provider.search!({ query: 'x', max_results: 5 }, call)).toEqual([
      { title: 'R&D lab', url: 'https://r.example/', snippet: "Use this 'tool' now", published_at: '2023-10-05T12:00:00Z' },
      { title: 'https://s.example/', url: 'https://s.example/', snippet: '' },
    ]);
  });

  it('takes a 429 Retry-After from X-RateLimit-Reset of the exhausted window', async () => {
    const upstream = fakeBrave({ faults: [{ kind: 'status', status: 429, retryAfter: 4 }] });
    const error = await failure(brave({ apiKey: KEY, fetch: upstream.fetch }).search!({ query: 'x', max_results: 5 }, call));
    expect([error.code, error.status, error.accepted, error.retryAfter]).toEqual(['upstream_busy', 429, false, 4]);
  });

  it('reads the monthly window when it is the exhausted one', () => {
    const headers = new Headers({ 'x-ratelimit-remaining': '1, 0', 'x-ratelimit-reset': '1, 86400' });
    expect(braveRetryAfter(headers)).toBe(86400);
    expect(braveRetryAfter(new Headers())).toBeUndefined();
  });

  it('maps a wrong key (422 SUBSCRIPTION_TOKEN_INVALID, as Brave answers it) to upstream_error without the key or body in the message', async () => {
    const upstream = fakeBrave({ apiKey: 'the-right-key' });
    const error = await failure(brave({ apiKey: 'wrong-key', fetch: upstream.fetch }).search!({ query: 'x', max_results: 5 }, call));
    expect([error.code, error.status, error.accepted]).toEqual(['upstream_error', 422, false]);
    expect(error.message).toBe('upstream failed: upstream_error (status 422)');
    // A 401 (the token missing its plan, an older answer) is the operator's too.
    const unauthorized = await failure(
      brave({ apiKey: 'k', fetch: fakeBrave({ apiKey: 'k', faults: [{ kind: 'status', status: 401 }] }).fetch }).search!({ query: 'x', max_results: 5 }, call),
    );
    expect([unauthorized.code, unauthorized.accepted]).toEqual(['upstream_error', false]);
  });

  it.each([
    [403, 'upstream_error', false],
    [422, 'invalid_request', false],
    [500, 'upstream_error', true],
    [503, 'upstream_unavailable', false],
  ])('maps status %i', async (status, code, accepted) => {
    const upstream = fakeBrave({ faults: [{ kind: 'status', status }] });
    const error = await failure(brave({ apiKey: KEY, fetch: upstream.fetch }).search!({ query: 'x', max_results: 5 }, call));
    expect([error.code, error.status, error.accepted]).toEqual([code, status, accepted]);
  });

  it('maps a too-long query refused by Brave (422) to invalid_request', async () => {
    const provider = brave({ apiKey: KEY, fetch: fakeBrave().fetch });
    const error = await failure(provider.search!({ query: 'x'.repeat(401), max_results: 5 }, call));
    expect([error.code, error.status]).toEqual(['invalid_request', 422]);
  });

  it('maps a refused connection to upstream_unavailable and a malformed body to upstream_error', async () => {
    const upstream = fakeBrave({ faults: [{ kind: 'refuse' }, { kind: 'malformed', afterChunks: 0 }] });
    const provider = brave({ apiKey: KEY, fetch: upstream.fetch });
    const refused = await failure(provider.search!({ query: 'x', max_results: 5 }, call));
    expect([refused.code, refused.accepted]).toEqual(['upstream_unavailable', false]);
    const malformed = await failure(provider.search!({ query: 'x', max_results: 5 }, call));
    expect([malformed.code, malformed.accepted]).toEqual(['upstream_error', true]);
  });

  it('returns no results when the reply has no web section', async () => {
    const provider = brave({ apiKey: KEY, fetch: async () => Response.json({ type: 'search', query: { original: 'x' } }) });
    expect(await provider.search!({ query: 'x', max_results: 5 }, call)).toEqual([]);
  });

  it('needs an apiKey', () => {
    expect(() => brave({})).toThrow('brave: apiKey is required (the X-Subscription-Token)');
  });
});
