import { checkReply } from '../http/check-reply';
import { postJson } from '../http/post-json';
import { readJsonReply } from '../http/read-json-reply';
import { ProviderError } from '../provider';
import { type GeminiResponse, geminiResponseSchema } from './gemini-api';
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
 * POSTs a JSON body to a model method and returns the 200 response; any other outcome throws a
 * {@link ProviderError} mapped by {@link mapGeminiError} (the shared `postJson` of every adapter).
 */
export function postGemini(transport: GeminiTransport, url: string, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
  return postJson({ url, headers: transport.headers, fetch: transport.fetch }, body, signal, mapGeminiError);
}

/**
 * Reads a 200 `generateContent` reply, checked by {@link geminiResponseSchema}: a body that is not
 * JSON, or not a reply where Tollgate reads one, is an upstream failure after it accepted.
 */
export async function readGeminiReply(response: Response, signal: AbortSignal | undefined): Promise<GeminiResponse> {
  let body: unknown;
  try {
    body = await readJsonReply(response);
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ProviderError('upstream_error', { accepted: true, status: response.status });
  }
  return checkReply(geminiResponseSchema, body, response.status);
}
