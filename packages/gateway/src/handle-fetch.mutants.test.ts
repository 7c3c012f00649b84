/**
 * Page fetch's money rules that no other test pinned: a fetch past the whole-call deadline
 * (upstreamHeadersTimeoutMs + upstreamBodyTimeoutMs, on the gateway's timers) ends at that
 * deadline with the spec's upstream_error, aborts the fetcher and charges nothing; a fetched page
 * is charged the per-call price once, and its ledger entry says what was fetched.
 */
import type { PageFetcher } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { setup } from '../test/test-harness';
import { flush, manualClock, manualTimers } from '../test/test-timers';

const START = 10_000_000;
const PRICE = 700;
const DEADLINES = { upstreamHeadersTimeoutMs: 1_000, upstreamBodyTimeoutMs: 1_000 };

describe('POST /v1/fetch: deadline and charge', () => {
  it('a fetcher that never answers is cut at the whole-call deadline of the gateway’s timers: 502 upstream_error, aborted, nothing charged', async () => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const signals: AbortSignal[] = [];
    const fetcher: PageFetcher = {
      fetch: (_request, options) => {
        if (options?.signal) signals.push(options.signal);
        return new Promise(() => {});
      },
    };
    const t = await setup({ clock, timers: time.timers, ...DEADLINES, pageFetcher: fetcher, fetchMicrosPerCall: PRICE });
    let done = false;
    const pending = t.post('/v1/fetch', { url: 'https://example.com/' }).then((response) => {
      done = true;
      return response;
    });
    await expect.poll(() => signals.length).toBe(1);
    expect(await t.balance()).toEqual({ balance: START, held: PRICE, available: START - PRICE });
    await time.advance(1_999);
    expect(done).toBe(false);
    expect(signals[0]?.aborted).toBe(false);
    await time.advance(1);
    await flush();
    expect(done).toBe(true);
    const response = await pending;
    expect(response.status).toBe(502);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await response.json()).toEqual({
      error: { message: 'The page could not be fetched.', type: 'upstream_error', param: null, code: 'upstream_error' },
    });
    expect(signals[0]?.aborted).toBe(true);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
    expect((await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge')).toEqual([]);
  });

  it('a fetched page costs the per-call price once; its entry names the endpoint and the final URL', async () => {
    const page = {
      object: 'page' as const,
      url: 'https://example.com/',
      final_url: 'https://www.example.com/',
      status: 200,
      title: 'Example',
      content_type: 'text/html',
      content: '# Example',
      truncated: false,
    };
    const fetcher: PageFetcher = { fetch: async () => ({ ok: true, page }) };
    const t = await setup({ pageFetcher: fetcher, fetchMicrosPerCall: PRICE });
    const response = await t.post('/v1/fetch', { url: 'https://example.com/' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(page);
    expect(await t.balance()).toEqual({ balance: START - PRICE, held: 0, available: START - PRICE });
    const charges = (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges.map((entry) => ({ micros: entry.micros, meta: entry.meta }))).toEqual([
      { micros: -PRICE, meta: { endpoint: 'fetch', url: 'https://www.example.com/' } },
    ]);
  });
});
