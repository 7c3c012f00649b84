import { GatewayError, requestId as newRequestId } from '@tollgate/core';
import { parseFetchRequest } from '@tollgate/validator';
import { holdCredits } from './credit-hold';
import { failed } from './handle-chat';
import type { MeteredContext, Runtime } from './runtime';

/** `POST /v1/fetch`: one page read through the SSRF-guarded page fetcher, at the per-call price. */
export async function handleFetch(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const { replies } = runtime;
  const parsed = parseFetchRequest(context.body);
  if (!parsed.ok) return replies.error(new GatewayError(parsed.code, { message: parsed.message }));
  const price = runtime.options.fetchMicrosPerCall ?? 0;
  const requestId = newRequestId();
  const hold = await holdCredits(runtime.store, context.principal, { micros: price, minimum: price, ttlMs: runtime.holdTtlMs, requestId, onSettleError: runtime.options.onSettleError });
  if (!hold) return replies.error('insufficient_balance');
  const started = { requestId, funding: context.principal.funding };
  context.log.requestId = requestId;

  const result = await runtime.options.pageFetcher!.fetch(parsed.request, { signal: context.request.signal });
  if (!result.ok) return failed(runtime, context, hold, started, new GatewayError(result.code, { message: result.message }));
  context.log.costMicros = price;
  await hold.settle(price, { endpoint: 'fetch', url: result.page.final_url });
  return replies.json(JSON.stringify(result.page), started);
}
