import { PLAN_LIMITS, type Plan, type Refusal, type Result, randomBase62, systemTimers, type Timers, withinDeadline } from '@tollgate/core';
import { endpointRateLimits, type Endpoint } from './endpoint-rate-limits';
import { limiterKeys } from './limiter-keys';
import type { AcquireResult, LimiterStore, RateResult, Semaphore } from './store';

/** Options of {@link createLimiter}. */
export interface LimiterOptions {
  /** Where limits keep their state: `memoryLimiter()` or `redisLimiter(redis)`. */
  store: LimiterStore;
  /** The clock (unix ms); defaults to `Date.now`. */
  now?: () => number;
  /** The timers of the store deadline; default the runtime's own. */
  timers?: Timers;
  /** Service-wide search + fetch requests a minute (503 `upstream_busy`); off when undefined. */
  sharedSearchFetchPerMinute?: number;
  /** Service-wide requests in flight (503 `server_busy`); off when undefined. */
  maxInFlight?: number;
  /** How long a lease lives without `extend()` (default 10 minutes). */
  leaseTtlMs?: number;
  /** A store failure refuses with `service_unavailable` (`closed`, default) or admits (`open`). */
  onStoreError?: 'closed' | 'open';
  /** A store call slower than this counts as a store failure (default 2,000 ms; 0 turns it off; none on a `local` store). */
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

/** A limit's refusal: its catalogue code and the whole seconds to wait (at least 1). */
export interface LimiterRefusal<C extends Refusal['code']> extends Refusal<C> {
  /** Whole seconds before a retry may be admitted, at least 1. */
  retryAfter: number;
}

/** The outcome of {@link Limiter.admit}. */
export type AdmitResult = Result<undefined, LimiterRefusal<'rate_limit_exceeded' | 'upstream_busy' | 'service_unavailable'>>;

/** The outcome of {@link Limiter.acquire}: the slot, or a refusal whose `retryAfter` is always 1. */
export type AcquireLeaseResult = Result<Lease, LimiterRefusal<'concurrency_limit_exceeded' | 'server_busy' | 'service_unavailable'>>;

/** The limits policy the gateway calls: rate limits first, then an in-flight slot. */
export interface Limiter {
  /** Counts one request against the account's and the service's rate limits, all or nothing. */
  admit(account: LimiterAccount, endpoint: Endpoint): Promise<AdmitResult>;
  /** Takes an in-flight slot of the account and of the service, all or nothing. */
  acquire(account: LimiterAccount, endpoint: Endpoint): Promise<AcquireLeaseResult>;
  /**
   * Gives back the request `admit` counted, for one refused after all by `acquire`: refused
   * requests consume nothing. Only after an `admit` that admitted; never throws.
   */
  refund(account: LimiterAccount, endpoint: Endpoint): Promise<void>;
}

const NO_OP_LEASE: Lease = { release: async () => {}, extend: async () => {} };

/**
 * The spec's limits over a `LimiterStore`.
 *
 * @example
 * const limiter = createLimiter({ store: memoryLimiter() });
 * const admitted = await limiter.admit({ id: 'acc_1', plan: 'free' }, 'chat');
 * if (!admitted.ok) return new GatewayError(admitted.error.code, { retryAfter: admitted.error.retryAfter }).toResponse();
 * const slot = await limiter.acquire({ id: 'acc_1', plan: 'free' }, 'chat');
 * if (slot.ok) try { … } finally { await slot.value.release(); }
 */
export function createLimiter(options: LimiterOptions): Limiter {
  const { store, sharedSearchFetchPerMinute, maxInFlight } = options;
  const now = options.now ?? Date.now;
  const timers = options.timers ?? systemTimers;
  const ttlMs = options.leaseTtlMs ?? 600_000;
  const failOpen = options.onStoreError === 'open';
  // No deadline on a store that answers within the call (memory): no timer and no race per request.
  const timeoutMs = store.local === true || options.storeTimeoutMs === 0 ? undefined : (options.storeTimeoutMs ?? 2_000);
  const unavailable = { ok: false, error: { code: 'service_unavailable', retryAfter: 1 } } as const;
  const admitted = { ok: true, value: undefined } as const;
  const unlimited = { ok: true, value: NO_OP_LEASE } as const;

  return {
    async admit(account, endpoint) {
      const { limits, sharedIndex } = endpointRateLimits(account, endpoint, sharedSearchFetchPerMinute);
      let answer: Result<RateResult, unknown>;
      const at = now();
      let rating: Promise<RateResult> | undefined;
      try {
        rating = store.rate(limits, at);
        answer = timeoutMs === undefined ? { ok: true, value: await rating } : await withinDeadline(rating, timeoutMs, { timers });
      } catch {
        answer = { ok: false, error: 'failed' };
      }
      // A store that failed or gave no answer in time is a store failure: refuse, or admit when open.
      if (!answer.ok) {
        if (failOpen) return admitted;
        // Refused: an answer that comes after all and counted the request gives it back.
        rating?.then((late) => (late.ok ? store.refund?.(limits, at) : undefined)).catch(() => {});
        return unavailable;
      }
      const result = answer.value;
      if (result.ok) return admitted;
      const code = result.error.index === sharedIndex ? 'upstream_busy' : 'rate_limit_exceeded';
      return { ok: false, error: { code, retryAfter: Math.max(1, Math.ceil(result.error.retryAfterMs / 1000)) } };
    },

    async acquire(account, endpoint) {
      if (endpoint === 'models') return unlimited;
      const semaphores: Semaphore[] = [{ key: limiterKeys.flight(account.id), max: PLAN_LIMITS[account.plan].inFlight }];
      if (maxInFlight !== undefined) semaphores.push({ key: limiterKeys.serviceFlight(), max: maxInFlight });
      const keys = semaphores.map((semaphore) => semaphore.key);
      const leaseId = `lease_${randomBase62(20)}`;
      let answer: Result<AcquireResult, unknown>;
      let acquiring: Promise<AcquireResult> | undefined;
      try {
        acquiring = store.acquire(semaphores, leaseId, ttlMs, now());
        answer = timeoutMs === undefined ? { ok: true, value: await acquiring } : await withinDeadline(acquiring, timeoutMs, { timers });
      } catch {
        answer = { ok: false, error: 'failed' };
      }
      if (!answer.ok) {
        // A timed-out acquire may still land later, one semaphore after another (a store over the
        // network): give back what it took now, and again once it is over, rather than hold a slot for a TTL.
        const release = () => store.release(keys, leaseId).catch(() => {});
        void release();
        acquiring?.then(release, release);
        return failOpen ? unlimited : unavailable;
      }
      const result = answer.value;
      if (!result.ok) {
        const code = result.error.index === 0 ? 'concurrency_limit_exceeded' : 'server_busy';
        return { ok: false, error: { code, retryAfter: 1 } };
      }
      return { ok: true, value: storeLease(store, keys, leaseId, ttlMs, now) };
    },

    async refund(account, endpoint) {
      if (store.refund === undefined) return;
      const { limits } = endpointRateLimits(account, endpoint, sharedSearchFetchPerMinute);
      try {
        const refunding = store.refund(limits, now());
        if (timeoutMs === undefined) await refunding;
        else await withinDeadline(refunding, timeoutMs, { timers });
      } catch {
        // Best effort: the count stays, as it would with a store that cannot give it back.
      }
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
