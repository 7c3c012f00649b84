/**
 * Two delivery rules whose removal no other test noticed: an image provider that returns more
 * images than asked delivers and charges only `n` (handle-images.ts), and a search provider that
 * returns more results than asked delivers only `max_results` (handle-search.ts). The providers
 * here ignore the request's count on purpose, so the gateway's own cut is what is tested.
 */
import type { ModelConfig } from '@tollgate/core';
import type { GeneratedImage, SearchResult } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { setup } from '../test/test-harness';

const START = 10_000_000;
const PER_IMAGE = 40_000;
const SEARCH_PRICE = 1_234;

/** A PNG signature and IHDR of the given width: enough for the gateway's sniffing. */
function png(width: number): string {
  const be32 = (value: number) => [value >>> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255];
  const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0));
  const bytes = [0x89, ...ascii('PNG\r\n\x1a\n'), ...be32(13), ...ascii('IHDR'), ...be32(width), ...be32(8), 8, 2, 0, 0, 0, 0, 0, 0, 0];
  return btoa(String.fromCharCode(...bytes));
}

const MODELS: ModelConfig[] = [
  { id: 'painter', type: 'image', provider: 'generous', price: { micros_per_image: PER_IMAGE, micros_per_reference: 0 } },
  { id: 'web', type: 'search', provider: 'generous', micros_per_call: SEARCH_PRICE },
];

/** Images and search results, always more than asked: the upstream's count is not to be trusted. */
function generous() {
  const calls: { n?: number; max_results?: number }[] = [];
  return {
    calls,
    provider: {
      kind: 'generous',
      zeroDataRetention: false,
      async images(request: { n: number }): Promise<GeneratedImage[]> {
        calls.push({ n: request.n });
        return [1, 2, 3, 4, 5].map((width) => ({ b64_json: png(width), mime_type: 'image/png' }));
      },
      async search(request: { query: string; max_results: number }): Promise<SearchResult[]> {
        calls.push({ max_results: request.max_results });
        return Array.from({ length: 20 }, (_, i) => ({ title: `hit ${i}`, url: `https://example.com/${i}`, snippet: request.query }));
      },
    },
  };
}

describe('what an over-generous upstream delivers and costs', () => {
  it('images: n of five returned images are delivered, and exactly n are charged', async () => {
    const upstream = generous();
    const t = await setup({ models: MODELS, providers: { generous: upstream.provider } });
    const response = await t.post('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse', n: 2 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { b64_json: string; mime_type: string }[] };
    expect(body.data).toEqual([
      { b64_json: png(1), mime_type: 'image/png' },
      { b64_json: png(2), mime_type: 'image/png' },
    ]);
    expect(upstream.calls).toEqual([{ n: 2 }]);
    expect(await t.balance()).toEqual({ balance: START - 2 * PER_IMAGE, held: 0, available: START - 2 * PER_IMAGE });
    const entries = (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge');
    expect(entries.map((entry) => entry.micros)).toEqual([-2 * PER_IMAGE]);
    expect(t.logs.at(-1)).toMatchObject({ status: 200, costMicros: 2 * PER_IMAGE });
  });

  it('search: max_results of twenty returned results are delivered, at the per-call price once', async () => {
    const upstream = generous();
    const t = await setup({ models: MODELS, providers: { generous: upstream.provider } });
    const response = await t.post('/v1/search', { query: 'tollgate', max_results: 3 });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { results: SearchResult[] };
    expect(body.results.map((result) => result.url)).toEqual(['https://example.com/0', 'https://example.com/1', 'https://example.com/2']);
    const defaults = (await (await t.post('/v1/search', { query: 'tollgate' })).json()) as { results: SearchResult[] };
    expect(defaults.results).toHaveLength(10);
    expect(upstream.calls).toEqual([{ max_results: 3 }, { max_results: 10 }]);
    expect(await t.balance()).toEqual({ balance: START - 2 * SEARCH_PRICE, held: 0, available: START - 2 * SEARCH_PRICE });
  });
});
