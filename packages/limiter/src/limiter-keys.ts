/**
 * Store keys of the limiter. Every key opens with a Redis hash tag (`{scope}`) so that all of an
 * account's keys share one Redis Cluster slot and can be updated by one script; service-wide keys
 * use the scope `$service`, which no account id of ours contains.
 */
export const limiterKeys = {
  /** The plan's requests a minute of an account. */
  plan: (accountId: string) => `{${accountId}}:rate:plan`,
  /** A fixed per-endpoint limit of an account (`models`, `search`, `fetch`). */
  endpoint: (accountId: string, endpoint: string) => `{${accountId}}:rate:${endpoint}`,
  /** The account's requests in flight. */
  flight: (accountId: string) => `{${accountId}}:flight`,
  /** The service-wide limit on search + fetch. */
  sharedSearchFetch: () => '{$service}:rate:search-fetch',
  /** The service-wide in-flight cap. */
  serviceFlight: () => '{$service}:flight',
} as const;
