import { mapFetchFailure } from '../openai/map-openai-error';
import { ProviderError } from '../provider';
import { mapGeminiError } from './map-gemini-error';

/** How to reach the Gemini API. */
export interface GeminiTransport {
  baseURL: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

/** The address of a model method: `{baseURL}/models/{model}:{method}`. */
export function geminiUrl(transport: GeminiTransport, upstream: string, method: string): string {
  const model = upstream.replace(/^models\//, '');
  return `${transport.baseURL}/models/${encodeURIComponent(model)}:${method}`;
}

/**
 * POSTs a JSON body and returns the 200 response; any other outcome throws a mapped
 * {@link ProviderError}. A connection that could not be made is `upstream_unavailable` and not
 * accepted; a reset or timeout may have reached the upstream and is `upstream_error` (the OpenAI
 * adapter's `mapFetchFailure`, shared). An abort by our own signal is rethrown as it is: the
 * client left and nothing failed upstream.
 */
export async function postGemini(transport: GeminiTransport, url: string, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
  let response: Response;
  try {
    response = await transport.fetch(url, { method: 'POST', headers: transport.headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
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
  throw mapGeminiError(response.status, parsed, response.headers);
}

/** Reads a 200 JSON body; a body that is not JSON is an upstream failure after it accepted. */
export async function readGeminiJson<T>(response: Response, signal: AbortSignal | undefined): Promise<T> {
  try {
    return (await response.json()) as T;
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ProviderError('upstream_error', { accepted: true, status: response.status });
  }
}
