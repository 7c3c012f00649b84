import { GatewayError, type ErrorCode, type Timers, withinDeadline } from '@tollgate/core';
import { ProviderError, type Provider } from '@tollgate/providers';
import type { CatalogueModel } from './model-catalogue';

/** Caches each tee provider's attestation for a while, sharing one check among concurrent requests. */
export interface Attestations {
  check(provider: Provider): Promise<boolean>;
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
  const cache = new Map<Provider, { until: number; pending?: Promise<boolean> }>();
  return {
    async check(provider) {
      const entry = cache.get(provider);
      if (entry?.pending) return entry.pending;
      if (entry && entry.until > now()) return true;
      // Called in a `then`, so a hook that throws synchronously settles after the pending entry
      // below is set, and its failure is removed rather than cached for good. A hook that answers
      // after the timeout is ignored: the race is already lost.
      const pending = withinDeadline(
        Promise.resolve().then(() => provider.attest!()),
        timeoutMs,
        { timers },
      ).then(
        (answer) => (answer.ok ? (cache.set(provider, { until: now() + ttlMs }), true) : (cache.delete(provider), false)),
        () => (cache.delete(provider), false),
      );
      cache.set(provider, { until: 0, pending });
      return pending;
    },
  };
}

/** The outcome of calling a model's routes. */
export type RouteResult<T> =
  | { ok: true; value: T; route: CatalogueModel['routes'][number] }
  | { ok: false; error: GatewayError; route?: CatalogueModel['routes'][number] };

/**
 * Calls a model's routes in order. A route whose provider does not confirm zero data retention is
 * never sent a `zdr` model's prompt; a `tee` route must pass attestation. The next route is tried
 * only when the upstream provably did not accept the request (connection refused, overloaded or
 * unavailable before any work): a request that reached a model is never silently retried.
 */
export async function callRoutes<T>(
  model: CatalogueModel,
  attestations: Attestations,
  call: (provider: Provider, upstream: string) => Promise<T>,
): Promise<RouteResult<T>> {
  const zdr = model.config.retention === 'zdr';
  const tee = model.config.tier === 'tee';
  let refusal: ErrorCode | undefined;
  let last: { error: GatewayError; route: CatalogueModel['routes'][number] } | undefined;
  for (const route of model.routes) {
    if (zdr && !route.provider.zeroDataRetention) {
      refusal ??= 'upstream_retention';
      continue;
    }
    if (tee && !(await attestations.check(route.provider))) {
      refusal = 'upstream_unattested';
      continue;
    }
    try {
      return { ok: true, value: await call(route.provider, route.upstream), route };
    } catch (error) {
      const mapped = toGatewayError(error);
      last = { error: mapped, route };
      if (!(error instanceof ProviderError) || error.accepted) return { ok: false, ...last };
    }
  }
  if (last) return { ok: false, ...last };
  return { ok: false, error: new GatewayError(refusal ?? 'upstream_unavailable') };
}

/** Maps any upstream failure to the catalogue; unknown failures are `upstream_error`. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof ProviderError) {
    const retryAfter = error.retryAfter ?? (error.code === 'upstream_busy' ? 1 : undefined);
    return new GatewayError(error.code, retryAfter === undefined ? {} : { retryAfter });
  }
  return new GatewayError('upstream_error');
}
