import { GatewayError, planAllows, requestId as newRequestId } from '@tollgate/core';
import { parseSearchRequest } from '@tollgate/validator';
import { callRoutes } from './call-routes';
import { holdCredits } from './credit-hold';
import { failed } from './failed';
import type { MeteredContext, Runtime } from './runtime';

/** `POST /v1/search`: one search call at the model's per-call price. */
export async function handleSearch(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const { replies } = runtime;
  const parsed = parseSearchRequest(context.body);
  if (!parsed.ok) return replies.error(GatewayError.from(parsed.error));
  const request = parsed.value;
  const model = request.model === undefined ? runtime.catalogue.defaultSearch : runtime.catalogue.find('search', request.model);
  if (!model) return replies.error('model_not_found');
  const config = model.config;
  context.log.model = config.id;
  if (!planAllows(context.principal.account.plan, config.plan ?? 'free')) return replies.error('model_requires_plan');

  const price = config.micros_per_call ?? 0;
  const requestId = newRequestId();
  const held = await holdCredits(runtime.store, context.principal, {
    micros: price,
    minimum: price,
    ttlMs: runtime.holdTtlMs,
    requestId,
    onSettleError: runtime.options.onSettleError,
    timers: runtime.timers,
  });
  if (!held.ok) return replies.error(GatewayError.from(held.error));
  const hold = held.value;
  const started = { requestId, funding: context.principal.funding };
  context.log.requestId = requestId;

  const result = await callRoutes(model, runtime.attestations, (provider, upstream) =>
    provider.search!({ query: request.query, max_results: request.max_results }, { upstream, signal: context.request.signal }),
  );
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  context.log.costMicros = price;
  await hold.settle(price, { model: config.id, endpoint: 'search' });
  const results = result.value.slice(0, request.max_results);
  return replies.json(JSON.stringify({ object: 'search.results', model: config.id, query: request.query, results }), started);
}
