import { GatewayError, withinDeadline } from '@tollgate/core';
import type { ProviderBase } from '@tollgate/providers';
import { callRoutes, type RoutePolicy, type RouteResult } from './call-routes';
import type { Route } from './model-catalogue';
import type { Runtime } from './runtime';

/** What bounds a non-streamed upstream call. */
export interface CallLimits {
  /** The whole call's deadline: response headers and body, in milliseconds. */
  deadlineMs: number;
  /** The client's request signal, when a client that leaves should stop the call (never for non-streamed chat). */
  signal?: AbortSignal;
}

/** A route result, or a call stopped by its deadline or by its client leaving. */
export type UpstreamResult<T> = RouteResult<T> | { ok: false; error: GatewayError; clientGone: boolean };

/**
 * Calls a model's routes (see callRoutes) under a deadline, with an abort signal the call passes on
 * to its provider: past `deadlineMs`, or as soon as the client's `signal` aborts, the upstream
 * request is aborted and the call answers `upstream_error` (with `clientGone` when the client left)
 * without waiting for the provider any longer.
 *
 * @example
 * const result = await callUpstream(runtime, model.routes, { zdr: model.zdr },
 *   (provider, upstream, signal) => provider.search(request, { upstream, signal }),
 *   { deadlineMs: runtime.wholeCallMs, signal: context.request.signal });
 */
export async function callUpstream<P extends ProviderBase, T>(
  runtime: Runtime,
  routes: readonly Route<P>[],
  policy: RoutePolicy<P>,
  call: (provider: P, upstream: string, signal: AbortSignal) => Promise<T>,
  limits: CallLimits,
): Promise<UpstreamResult<T>> {
  const abort = new AbortController();
  const attempt = callRoutes(routes, policy, (provider, upstream) => call(provider, upstream, abort.signal));
  const answer = await withinDeadline(attempt, limits.deadlineMs, { timers: runtime.timers, ...(limits.signal ? { signal: limits.signal } : {}) });
  if (answer.ok) return answer.value;
  abort.abort();
  return { ok: false, error: new GatewayError('upstream_error'), clientGone: answer.error.reason === 'aborted' };
}
