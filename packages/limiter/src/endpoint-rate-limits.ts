import { ENDPOINT_LIMITS, PLAN_LIMITS, type Plan } from '@tollgate/core';
import { limiterKeys } from './limiter-keys';
import { rateLimitFor } from './rate-limit-for';
import type { RateLimit } from './store';

/** An endpoint as the limiter sees it. */
export type Endpoint = 'chat' | 'images' | 'search' | 'fetch' | 'models';

/** The account's rate limits of a request, and which of them is the service-wide one. */
export interface EndpointRateLimits {
  /** The limits to admit all-or-nothing, the account's first. */
  limits: RateLimit[];
  /** Index in `limits` of the service-wide search + fetch limit, or -1. */
  sharedIndex: number;
}

/**
 * The rate limits one request must pass: the plan's requests a minute for every endpoint but
 * `models`, which has its own 60 a minute; search and fetch also their fixed 30 a minute and, when
 * configured, the service-wide search + fetch limit (last, so an account refusal wins).
 *
 * @example
 * endpointRateLimits({ id: 'acc_1', plan: 'free' }, 'search', undefined).limits.length; // 2
 */
export function endpointRateLimits(
  account: { id: string; plan: Plan },
  endpoint: Endpoint,
  sharedSearchFetchPerMinute: number | undefined,
): EndpointRateLimits {
  if (endpoint === 'models') {
    const limit = rateLimitFor(ENDPOINT_LIMITS.models);
    return { limits: [{ key: limiterKeys.endpoint(account.id, 'models'), ...limit }], sharedIndex: -1 };
  }
  const plan = PLAN_LIMITS[account.plan];
  const limits: RateLimit[] = [{ key: limiterKeys.plan(account.id), intervalMs: 60_000 / plan.requestsPerMinute, burst: plan.burst }];
  if (endpoint !== 'search' && endpoint !== 'fetch') return { limits, sharedIndex: -1 };
  limits.push({ key: limiterKeys.endpoint(account.id, endpoint), ...rateLimitFor(ENDPOINT_LIMITS[endpoint]) });
  if (sharedSearchFetchPerMinute === undefined) return { limits, sharedIndex: -1 };
  limits.push({ key: limiterKeys.sharedSearchFetch(), ...rateLimitFor(sharedSearchFetchPerMinute) });
  return { limits, sharedIndex: limits.length - 1 };
}
