import { ProviderError } from '../provider';
import { mapFetchFailure } from './map-fetch-failure';
import { readErrorBody } from './read-error-body';

/** Where and how an adapter reaches one upstream method. */
export interface JsonTarget {
  url: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

/** An adapter's mapping of a non-2xx reply (status, parsed body or its text, headers) to the spec's code. */
export type MapErrorReply = (status: number, body: unknown, headers: Headers) => ProviderError;

/**
 * POSTs a JSON body and resolves with a 2xx response. Anything else throws: a refusal mapped by
 * `mapError` from at most 64 KiB of its body, a failed connection by {@link mapFetchFailure}, and
 * a caller's abort as {@link abortReason} says. Shared by the OpenAI, Anthropic and Gemini adapters.
 * @example
 * const response = await postJson({ url, headers, fetch }, body, signal, mapAnthropicError);
 */
export async function postJson(target: JsonTarget, body: unknown, signal: AbortSignal | undefined, mapError: MapErrorReply): Promise<Response> {
  if (signal?.aborted) throw abortReason(signal);
  let response: Response;
  try {
    response = await target.fetch(target.url, { method: 'POST', headers: target.headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    throw mapFetchFailure(error);
  }
  if (response.ok) return response;
  throw mapError(response.status, await readErrorBody(response), response.headers);
}

/**
 * What to throw when the caller's signal aborted: a deadline (`AbortSignal.timeout`) is an upstream
 * that did not answer in time; any other abort is the caller's own (the client left, nothing failed
 * upstream) and is rethrown as it is.
 */
export function abortReason(signal: AbortSignal): unknown {
  const reason = signal.reason as { name?: string } | undefined;
  if (reason?.name === 'TimeoutError') return new ProviderError('upstream_error', { accepted: true });
  return signal.reason;
}
