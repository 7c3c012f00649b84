import { GatewayError, withinDeadline } from '@tollgate/core';
import type { PageFetcher, PageFetchResult } from '@tollgate/providers';
import { type FetchRequest, parseFetchRequest } from '@tollgate/validator';
import { admitMetered, type MeteredEndpoint } from './admit-metered';
import { failed } from './failed';
import type { Handler } from './runtime';

/** Page fetch has no model: every plan may use it, at the operator's per-call price. */
const PAGE_FETCH = { plan: 'free' } as const;

/** Fetch's own steps: a URL its spelling already condemns is refused before the hold. */
function fetchEndpoint(fetcher: PageFetcher, price: number): MeteredEndpoint<FetchRequest, typeof PAGE_FETCH, FetchRequest> {
  return {
    parse: parseFetchRequest,
    model: () => PAGE_FETCH,
    resolve: (request) => {
      const precheck = fetcher.precheck?.(request.url);
      if (precheck && !precheck.ok) return { ok: false, error: { code: precheck.code, message: precheck.message } };
      return { ok: true, value: request };
    },
    hold: () => ({ micros: price, minimum: price }),
  };
}

/**
 * `POST /v1/fetch` through `fetcher`: one page read through the SSRF-guarded page fetcher, at the
 * per-call price. A URL refused on its spelling (scheme, credentials, port, a non-public IP literal
 * in any spelling) is refused before the hold, without `X-Request-Id`; a refusal that needs DNS (a
 * name resolving privately, a redirect to a refused address) comes after the request started, so
 * it carries `X-Request-Id` and `X-Funding`, and its hold is released without a charge.
 */
export function fetchHandler(fetcher: PageFetcher, price: number): Handler {
  const endpoint = fetchEndpoint(fetcher, price);
  return async (runtime, context) => {
    const admitted = await admitMetered(runtime, context, endpoint);
    if (!admitted.ok) return admitted.error;
    const { prepared: request, hold, started } = admitted.value;
    const abort = new AbortController();
    let result: PageFetchResult;
    try {
      // The fetcher hears the client leave itself (and answers its own refusal); the deadline is ours.
      const signal = AbortSignal.any([context.request.signal, abort.signal]);
      const answer = await withinDeadline(fetcher.fetch(request, { signal }), runtime.wholeCallMs, { timers: runtime.timers });
      if (!answer.ok) abort.abort();
      result = answer.ok ? answer.value : { ok: false, code: 'upstream_error', message: 'The page could not be fetched.' };
    } catch {
      // A fetcher that throws (a custom one, or a bug) must not leave the credit held until the TTL.
      result = { ok: false, code: 'upstream_error', message: 'The page could not be fetched.' };
    }
    if (!result.ok) return failed(runtime, context, hold, started, new GatewayError(result.code, { message: result.message }));
    context.log.costMicros = price;
    await hold.settle(price, { endpoint: 'fetch', url: result.page.final_url });
    return runtime.replies.json(JSON.stringify(result.page), started);
  };
}
