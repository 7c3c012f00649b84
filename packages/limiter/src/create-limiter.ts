import { PLAN_LIMITS, randomBase62, type Plan } from '@tollgate/core';
import { endpointRateLimits, type Endpoint } from './endpoint-rate-limits';
import { limiterKeys } from './limiter-keys';
import type { LimiterStore, Semaphore } from './store';
import { within } from './within';

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** Where limits keep their state: `memoryLimiter()` or `redisLimiter(redis)`. */
  store: LimiterStore;
  /** The clock (unix ms); defaults to `Date.now`. */
  now?: () => number;
  /** Service-wide search + fetch requests a minute (503 `upstream_busy`); off when undefined. */
  sharedSearchFetchPerMinute?: number;
  /** Service-wide requests in flight (503 `server_busy`); off when undefined. */
  maxInFlight?: number;
  /** How long a lease lives without `extend()` (default 10 minutes). */
  leaseTtlMs?: number;
  /** A store failure refuses with `service_unavailable` (`closed`, default) or admits (`open`). */
  onStoreError?: 'closed' | 'open';
  /** A store call slower than this counts as a store failure (default 2,000 ms; 0 turns it off). */
  storeTimeoutMs?: number;
}

/** The account a request acts for. */
export interface LimiterAccount {
  /** Account id: all of its keys and its owner's app use share its limits. */
  id: string;
  /** The account's plan, which sets its requests a minute and in flight. */
  plan: Plan;
}

/** An in-flight slot. */
export interface Lease {
  /** Gives the slot back; idempotent, never throws (a failed release expires with the lease). */
  release(): Promise<void>;
  /** Keeps a long request's slot for another lease TTL; never throws. */
  extend(): Promise<void>;
}

/** The outcome of {@link Limiter.admit}; `retryAfter` is whole seconds, at least 1. */
export type AdmitResult = { ok: true } | { ok: false; code: 'rate_limit_exceeded' | 'upstream_busy' | 'service_unavailable'; retryAfter: number };

/** The outcome of {@link Limiter.acquire}; `retryAfter` is always 1. */
export type AcquireLeaseResult =
  | { ok: true; lease: Lease }
  | { ok: false; code: 'concurrency_limit_exceeded' | 'server_busy' | 'service_unavailable'; retryAfter: number };

/** The limits policy the gateway calls: rate limits first, then an in-flight slot. */
export interface Limiter {
  /** Counts one request against the account's and the service's rate limits, all or nothing. */
  admit(account: LimiterAccount, endpoint: Endpoint): Promise<AdmitResult>;
  /** Takes an in-flight slot of the account and of the service, all or nothing. */
  acquire(account: LimiterAccount, endpoint: Endpoint): Promise<AcquireLeaseResult>;
}

const NO_OP_LEASE: Lease = { release: async () => {}, extend: async () => {} };

/**
 * The spec's limits over a `LimiterStore`.
 *
 * @example
 * const limiter = createLimiter({ store: memoryLimiter() });
 * const admitted = await limiter.admit({ id: 'acc_1', plan: 'free' }, 'chat');
 * if (!admitted.ok) return new GatewayError(admitted.code, { retryAfter: admitted.retryAfter }).toResponse();
 * const slot = await limiter.acquire({ id: 'acc_1', plan: 'free' }, 'chat');
 * if (slot.ok) try { … } finally { await slot.lease.release(); }
 */
export function createLimiter(options: LimiterOptions): Limiter {
  const { store, sharedSearchFetchPerMinute, maxInFlight } = options;
  const now = options.now ?? Date.now;
  const ttlMs = options.leaseTtlMs ?? 600_000;
  const failOpen = options.onStoreError === 'open';
  const timeoutMs = options.storeTimeoutMs === 0 ? undefined : (options.storeTimeoutMs ?? 2_000);
  const unavailable = { ok: false, code: 'service_unavailable', retryAfter: 1 } as const;

  return {
    async admit(account, endpoint) {
      const { limits, sharedIndex } = endpointRateLimits(account, endpoint, sharedSearchFetchPerMinute);
      let result;
      try {
        result = await within(store.rate(limits, now()), timeoutMs);
      } catch {
        return failOpen ? { ok: true } : unavailable;
      }
      if (result.ok) return { ok: true };
      const code = result.index === sharedIndex ? 'upstream_busy' : 'rate_limit_exceeded';
      return { ok: false, code, retryAfter: Math.max(1, Math.ceil(result.retryAfterMs / 1000)) };
    },

    async acquire(account, endpoint) {
      if (endpoint === 'models') return { ok: true, lease: NO_OP_LEASE };
      const semaphores: Semaphore[] = [{ key: limiterKeys.flight(account.id), max: PLAN_LIMITS[account.plan].inFlight }];
      if (maxInFlight !== undefined) semaphores.push({ key: limiterKeys.serviceFlight(), max: maxInFlight });
      const keys = semaphores.map((semaphore) => semaphore.key);
      const leaseId = `lease_${randomBase62(20)}`;
      let result;
      try {
        result = await within(store.acquire(semaphores, leaseId, ttlMs, now()), timeoutMs);
      } catch {
        // A timed-out acquire may still land later; give it back rather than hold a slot for a TTL.
        store.release(keys, leaseId).catch(() => {});
        return failOpen ? { ok: true, lease: NO_OP_LEASE } : unavailable;
      }
      if (!result.ok) {
        const code = result.index === 0 ? 'concurrency_limit_exceeded' : 'server_busy';
        return { ok: false, code, retryAfter: 1 };
      }
      return { ok: true, lease: storeLease(store, keys, leaseId, ttlMs, now) };
    },
  };
}

/** A lease held in the store; release runs once, failures are left to the lease's expiry. */
function storeLease(store: LimiterStore, keys: string[], leaseId: string, ttlMs: number, now: () => number): Lease {
  let released: Promise<void> | undefined;
  return {
    release() {
      released ??= store.release(keys, leaseId).catch(() => {});
      return released;
    },
    async extend() {
      if (released !== undefined) return;
      await store.extend(keys, leaseId, ttlMs, now()).catch(() => {});
    },
  };
}
