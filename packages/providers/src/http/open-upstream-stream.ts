import { ProviderError } from '../provider';
import { cancellableStream, linkAbort } from './link-abort';

/**
 * Starts a streamed upstream call: `post` runs under a signal of our own that follows the caller's,
 * and the 2xx body, turned into chunks by `decode`, comes back as a stream whose cancel aborts the
 * upstream fetch. A failed start unlinks from the caller's signal before it throws.
 * @example
 * return openUpstreamStream(options.signal, (signal) => postJson(target, body, signal, mapError), (body) => body.pipeThrough(decoder));
 */
export async function openUpstreamStream<T>(
  signal: AbortSignal | undefined,
  post: (signal: AbortSignal) => Promise<Response>,
  decode: (body: ReadableStream<Uint8Array>) => ReadableStream<T>,
): Promise<ReadableStream<T>> {
  const abort = linkAbort(signal);
  let response: Response;
  try {
    response = await post(abort.signal);
  } catch (error) {
    abort.unlink();
    throw error;
  }
  if (!response.body) {
    abort.unlink();
    throw new ProviderError('upstream_error', { accepted: true, status: response.status });
  }
  return cancellableStream(decode(response.body), abort);
}
