/**
 * The ledger entry of a search charge says what it paid for (the usage history): the model and the
 * endpoint, at the model's per-call price.
 */
import type { ModelConfig } from '@tollgate/core';
import type { SearchResult } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { setup } from '../test/test-harness';

const SEARCH_PRICE = 1_234;

const MODELS: ModelConfig[] = [{ id: 'web', type: 'search', provider: 'upstream', micros_per_call: SEARCH_PRICE }];

const upstream = {
  kind: 'upstream',
  zeroDataRetention: false,
  async search(): Promise<SearchResult[]> {
    return [{ title: 'one', url: 'https://example.com/1', snippet: 'a' }];
  },
};

describe('search: the entry of a search charge', () => {
  it('names the model and the endpoint, at the per-call price', async () => {
    const t = await setup({ models: MODELS, providers: { upstream } });
    const response = await t.post('/v1/search', { model: 'web', query: 'tollgate' });
    expect(response.status).toBe(200);
    const charges = (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge');
    expect(charges.map((entry) => ({ micros: entry.micros, meta: entry.meta }))).toEqual([
      { micros: -SEARCH_PRICE, meta: { model: 'web', endpoint: 'search' } },
    ]);
  });
});
