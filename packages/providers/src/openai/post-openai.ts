import { ProviderError } from '../provider';
import { mapFetchFailure, mapOpenAIError, readErrorBody } from './map-openai-error';

/** An upstream call in progress: its response (status 2xx) and the controller that aborts it. */
export interface UpstreamCall {
  response: Response;
  /** Aborts the upstream request (and its body). */
  abort(): void;
  /** Stops following the caller's signal once the call is over. */
  unlink(): void;
}

/** What {@link postOpenAI} needs of the provider's settings. */
export interface PostTarget {
  url: string;
  headers: Record<string, string>;
  fetch: typeof globalThis.fetch;
}

/**
 * POSTs JSON to the upstream. Resolves with a 2xx response; throws a mapped ProviderError on
 * refusal or connection failure, or the caller's abort reason when the caller gave up.
 */
export async function postOpenAI(target: PostTarget, body: unknown, signal: AbortSignal | undefined): Promise<UpstreamCall> {
  const controller = new AbortController();
  // Our own controller follows the caller's: cancelling a returned stream must abort the fetch
  // even when the caller passed no signal.
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) throw abortReason(signal);
  signal?.addEventListener('abort', onAbort, { once: true });
  const unlink = () => signal?.removeEventListener('abort', onAbort);
  let response: Response;
  try {
    response = await target.fetch(target.url, {
      method: 'POST',
      headers: target.headers,
      body: JSON.stringify(body),
      signal: controller.signal,
    });
  } catch (error) {
    unlink();
    if (signal?.aborted) throw abortReason(signal);
    throw mapFetchFailure(error);
  }
  if (!response.ok) {
    const parsed = await readErrorBody(response);
    unlink();
    throw mapOpenAIError(response.status, parsed, response.headers);
  }
  return { response, abort: () => controller.abort(), unlink };
}

/**
 * What to throw when the caller's signal aborted: a deadline (`AbortSignal.timeout`) is an upstream
 * that did not answer in time; any other abort is the caller's own and is rethrown as it is.
 */
export function abortReason(signal: AbortSignal): unknown {
  const reason = signal.reason as { name?: string } | undefined;
  if (reason?.name === 'TimeoutError') return new ProviderError('upstream_error', { accepted: true });
  return signal.reason;
}
