import { describe, expect, it } from 'vitest';
import { fakeBrave } from './fake-brave';

const KEY = { 'x-subscription-token': 'brave-test-key' };
const BASE = 'https://api.search.brave.com/res/v1/web/search';

describe('fakeBrave', () => {
  it("answers with Brave's reply shape and X-RateLimit headers", async () => {
    const upstream = fakeBrave();
    const response = await upstream.fetch(`${BASE}?q=hello+world&count=3`, { headers: KEY });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-policy')).toBe('1;w=1, 15000;w=2592000');
    expect(response.headers.get('x-ratelimit-reset')).toBe('1, 1419704');
    const body = await response.json();
    expect([body.type, body.query.original, body.web.type, body.web.results.length]).toEqual(['search', 'hello world', 'search', 3]);
    expect(body.web.results[0]).toMatchObject({
      title: 'hello world - result 1',
      type: 'search_result',
      description:
        'Result 1 of the fake index for <strong>hello</strong> <strong>world</strong>: a page that talks about <strong>hello</strong> <strong>world</strong>.',
      page_age: expect.stringMatching(/^2024-\d{2}-\d{2}T\d{2}:00:00$/),
      age: expect.stringMatching(/^[A-Z][a-z]+ \d{1,2}, 2024$/),
    });
    expect(body.web.results[1]).not.toHaveProperty('page_age');
    const plain = await (await upstream.fetch(`${BASE}?q=hello&count=1&text_decorations=false`, { headers: KEY })).json();
    expect(plain.web.results[0].description).toBe('Result 1 of the fake index for hello: a page that talks about hello.');
  });

  it('refuses a wrong token and a missing one with 422 (SUBSCRIPTION_TOKEN_INVALID, VALIDATION), in ErrorResponse shape', async () => {
    const upstream = fakeBrave({ now: () => 1_700_000_000_000 });
    const wrong = await upstream.fetch(`${BASE}?q=x`, { headers: { 'x-subscription-token': 'nope' } });
    expect([wrong.status, await wrong.json()]).toEqual([
      422,
      {
        type: 'ErrorResponse',
        error: { id: expect.any(String), status: 422, code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.', meta: {} },
        time: 1_700_000_000,
      },
    ]);
    const missing = await upstream.fetch(`${BASE}?q=x`);
    expect([missing.status, (await missing.json()).error.code]).toEqual([422, 'VALIDATION']);
  });

  it('validates q and count with 422', async () => {
    const upstream = fakeBrave();
    for (const query of ['q=', `q=${'x'.repeat(401)}`, 'q=x&count=21', 'q=x&count=0']) {
      const response = await upstream.fetch(`${BASE}?${query}`, { headers: KEY });
      expect([response.status, (await response.json()).error.code]).toEqual([422, 'VALIDATION']);
    }
  });

  it('answers a 429 fault as Brave does: RATE_LIMITED with the reset in X-RateLimit-Reset', async () => {
    const upstream = fakeBrave({ faults: [{ kind: 'status', status: 429, retryAfter: 3 }] });
    const response = await upstream.fetch(`${BASE}?q=x`, { headers: KEY });
    expect([
      response.status,
      response.headers.get('x-ratelimit-remaining')?.split(',')[0],
      response.headers.get('x-ratelimit-reset'),
      response.headers.get('retry-after'),
    ]).toEqual([429, '0', '3, 1419704', null]);
    expect((await response.json()).error).toMatchObject({ status: 429, code: 'RATE_LIMITED', detail: 'Request rate limit exceeded for plan.' });
  });
});
