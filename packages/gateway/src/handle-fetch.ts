import { GatewayError, requestId as newRequestId } from '@tollgate/core';
import type { PageFetchResult } from '@tollgate/providers';
import { parseFetchRequest } from '@tollgate/validator';
import { holdCredits } from './credit-hold';
import { failed } from './failed';
import type { MeteredContext, Runtime } from './runtime';

/**
 * `POST /v1/fetch`: one page read through the SSRF-guarded page fetcher, at the per-call price.
 * A URL refused on its spelling (scheme, credentials, port, a non-public IP literal in any
 * spelling) is refused before the hold, without `X-Request-Id`; a refusal that needs DNS (a name
 * resolving privately, a redirect to a refused address) comes after the request started, so it
 * carries `X-Request-Id` and `X-Funding`, and its hold is released without a charge.
 */
export async function handleFetch(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const { replies } = runtime;
  const fetcher = runtime.options.pageFetcher!;
  const parsed = parseFetchRequest(context.body);
  if (!parsed.ok) return replies.error(GatewayError.from(parsed.error));
  const precheck = fetcher.precheck?.(parsed.value.url);
  if (precheck && !precheck.ok) return replies.error(new GatewayError(precheck.code, { message: precheck.message }));

  const price = runtime.options.fetchMicrosPerCall ?? 0;
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

  let result: PageFetchResult;
  try {
    result = await fetcher.fetch(parsed.value, { signal: context.request.signal });
  } catch {
    // A fetcher that throws (a custom one, or a bug) must not leave the credit held until the TTL.
    result = { ok: false, code: 'upstream_error', message: 'The page could not be fetched.' };
  }
  if (!result.ok) return failed(runtime, context, hold, started, new GatewayError(result.code, { message: result.message }));
  context.log.costMicros = price;
  await hold.settle(price, { endpoint: 'fetch', url: result.page.final_url });
  return replies.json(JSON.stringify(result.page), started);
}
