import { ProviderError } from '../provider';
import { readErrorBody } from '../http/read-error-body';
import { readJsonReply } from '../http/read-json-reply';
import { parseRetryAfter, searchStatusError } from './search-error';

/** One GET of a search upstream. */
export interface SearchGetOptions {
  fetch: typeof globalThis.fetch;
  url: URL;
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** Seconds to wait from a refusal's headers when it has no Retry-After (Brave's X-RateLimit-Reset). */
  retryAfter?: (headers: Headers) => number | undefined;
}

/**
 * GETs a search upstream's JSON reply, mapping every failure to a {@link ProviderError}:
 * connection failure -> upstream_unavailable (not accepted); a status per `searchStatusError`;
 * an unreadable 2xx body or an abort -> upstream_error.
 */
export async function searchGet(options: SearchGetOptions): Promise<unknown> {
  let response: Response;
  try {
    response = await options.fetch(options.url, { method: 'GET', headers: options.headers, signal: options.signal });
  } catch {
    if (options.signal?.aborted) throw new ProviderError('upstream_error', { accepted: true });
    throw new ProviderError('upstream_unavailable', { accepted: false });
  }
  if (!response.ok) {
    const retryAfter = parseRetryAfter(response.headers.get('retry-after')) ?? options.retryAfter?.(response.headers);
    // A 400 or 422 is read (bounded) to tell the operator's key from the client's query.
    if (response.status === 400 || response.status === 422) throw searchStatusError(response.status, retryAfter, await readErrorBody(response));
    response.body?.cancel().catch(() => undefined);
    throw searchStatusError(response.status, retryAfter);
  }
  try {
    return await readJsonReply(response);
  } catch {
    throw new ProviderError('upstream_error', { status: response.status, accepted: true });
  }
}
