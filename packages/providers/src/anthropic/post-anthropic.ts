import { mapFetchFailure } from '../openai/map-openai-error';
import type { ProviderError } from '../provider';
import { mapAnthropicError } from './map-anthropic-error';

/** Where and how to reach the Messages API. */
export interface AnthropicTransport {
  url: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

/**
 * POSTs a JSON body and returns the 200 response; any other outcome throws a mapped
 * {@link ProviderError}. A connection that could not be made is `upstream_unavailable` and not
 * accepted; a reset or timeout may have reached the upstream and is `upstream_error` (the OpenAI
 * adapter's `mapFetchFailure`, shared). An abort by our own signal is rethrown as it is: the
 * client left and nothing failed upstream.
 */
export async function postAnthropic(transport: AnthropicTransport, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
  let response: Response;
  try {
    response = await transport.fetch(transport.url, {
      method: 'POST',
      headers: transport.headers,
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw mapFetchFailure(error);
  }
  if (response.ok) return response;
  let parsed: unknown;
  try {
    parsed = JSON.parse(await response.text());
  } catch {
    parsed = undefined;
  }
  throw mapAnthropicError(response.status, parsed, response.headers);
}
