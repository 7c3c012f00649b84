import { GatewayError, type ErrorCode, type Timers, withinDeadline } from '@tollgate/core';
import { ProviderError, type ProviderBase } from '@tollgate/providers';
import type { AttestedProvider, Route } from './model-catalogue';

/** Caches each tee provider's attestation for a while, sharing one check among concurrent requests. */
export interface Attestations {
  check(provider: AttestedProvider): Promise<boolean>;
}

/** Options of {@link createAttestations}. */
export interface AttestationOptions {
  /** How long a passed check is trusted. */
  ttlMs: number;
  /** A check that has not passed after this long fails (a hung `attest` must not hang requests). */
  timeoutMs: number;
  now: () => number;
  timers: Timers;
}

/** Attestation checks cached for `ttlMs`; a failed or timed-out check is not cached. */
export function createAttestations(options: AttestationOptions): Attestations {
  const { ttlMs, timeoutMs, now, timers } = options;
  const cache = new Map<AttestedProvider, { until: number; pending?: Promise<boolean> }>();
  return {
    async check(provider) {
      const entry = cache.get(provider);
      if (entry?.pending) return entry.pending;
      if (entry && entry.until > now()) return true;
      // Called in a `then`, so a hook that throws synchronously settles after the pending entry
      // below is set, and its failure is removed rather than cached for good. A hook that answers
      // after the timeout is ignored: the race is already lost.
      const pending = withinDeadline(
        Promise.resolve().then(() => provider.attest()),
        timeoutMs,
        { timers },
      ).then(
        (answer) => {
          if (answer.ok) cache.set(provider, { until: now() + ttlMs });
          else cache.delete(provider);
          return answer.ok;
        },
        () => {
          cache.delete(provider);
          return false;
        },
      );
      cache.set(provider, { until: 0, pending });
      return pending;
    },
  };
}

/** Which of a model's routes may be sent its request. */
export interface RoutePolicy<P extends ProviderBase> {
  /** A `zdr` model: only routes whose provider confirms zero data retention. */
  zdr: boolean;
  /** A `tee` model: only routes whose provider passes attestation now. */
  attested?: (provider: P) => Promise<boolean>;
}

/** The outcome of calling a model's routes: the value and the route that gave it, or the error to answer. */
export type RouteResult<T> = { ok: true; value: T; route: { name: string } } | { ok: false; error: GatewayError };

/**
 * Calls a model's routes in order. A route whose provider does not confirm zero data retention is
 * never sent a `zdr` model's prompt; a `tee` route must pass attestation. The next route is tried
 * only when the upstream provably did not accept the request (connection refused, overloaded or
 * unavailable before any work): a request that reached a model is never silently retried.
 */
export async function callRoutes<P extends ProviderBase, T>(
  routes: readonly Route<P>[],
  policy: RoutePolicy<P>,
  call: (provider: P, upstream: string) => Promise<T>,
): Promise<RouteResult<T>> {
  let refusal: ErrorCode | undefined;
  let last: GatewayError | undefined;
  for (const route of routes) {
    if (policy.zdr && !route.provider.zeroDataRetention) {
      refusal ??= 'upstream_retention';
      continue;
    }
    if (policy.attested && !(await policy.attested(route.provider))) {
      refusal = 'upstream_unattested';
      continue;
    }
    try {
      return { ok: true, value: await call(route.provider, route.upstream), route };
    } catch (error) {
      last = toGatewayError(error);
      if (!(error instanceof ProviderError) || error.accepted) return { ok: false, error: last };
    }
  }
  return { ok: false, error: last ?? new GatewayError(refusal ?? 'upstream_unavailable') };
}

/** Maps any upstream failure to the catalogue; unknown failures are `upstream_error`. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof ProviderError) {
    const retryAfter = error.retryAfter ?? (error.code === 'upstream_busy' ? 1 : undefined);
    return new GatewayError(error.code, retryAfter === undefined ? {} : { retryAfter });
  }
  return new GatewayError('upstream_error');
}
