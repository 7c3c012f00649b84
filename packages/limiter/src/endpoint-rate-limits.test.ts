import { describe, expect, it } from 'vitest';
import { endpointRateLimits } from './endpoint-rate-limits';

const free = { id: 'acc_1', plan: 'free' } as const;
const PLAN = { key: '{acc_1}:rate:plan', intervalMs: 1_000, burst: 7 };

describe('endpointRateLimits', () => {
  it('models: only its own 60 a minute, and no service-wide limit', () => {
    expect(endpointRateLimits(free, 'models', 100)).toEqual({ limits: [{ key: '{acc_1}:rate:models', intervalMs: 1_000, burst: 7 }], sharedIndex: -1 });
  });

  it('chat and images: only the plan', () => {
    expect(endpointRateLimits(free, 'chat', 100)).toEqual({ limits: [PLAN], sharedIndex: -1 });
    expect(endpointRateLimits({ id: 'acc_1', plan: 'plus' }, 'images', 100)).toEqual({
      limits: [{ key: '{acc_1}:rate:plan', intervalMs: 500, burst: 13 }],
      sharedIndex: -1,
    });
  });

  it('search and fetch: the plan, their own 30 a minute, then the service-wide limit when set', () => {
    const search = { key: '{acc_1}:rate:search', intervalMs: 2_000, burst: 4 };
    expect(endpointRateLimits(free, 'search', undefined)).toEqual({ limits: [PLAN, search], sharedIndex: -1 });
    expect(endpointRateLimits(free, 'fetch', 120)).toEqual({
      limits: [PLAN, { key: '{acc_1}:rate:fetch', intervalMs: 2_000, burst: 4 }, { key: '{$service}:rate:search-fetch', intervalMs: 500, burst: 13 }],
      sharedIndex: 2,
    });
  });
});
