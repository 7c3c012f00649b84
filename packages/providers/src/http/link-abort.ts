import { ProviderError } from '../provider';

/** An abort controller that follows a caller's signal, and a way to stop following it. */
export interface LinkedAbort {
  signal: AbortSignal;
  abort(): void;
  /** Removes the listener on the caller's signal once the call is over. */
  unlink(): void;
}

/**
 * A controller of our own, aborted when the caller's signal aborts: cancelling a returned stream
 * must abort the upstream fetch even when the caller passed no signal.
 */
export function linkAbort(outer: AbortSignal | undefined): LinkedAbort {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    unlink: () => outer?.removeEventListener('abort', onAbort),
  };
}

/**
 * Wraps an upstream stream so that cancelling it aborts the upstream fetch (`abort`) and the link
 * to the caller's signal is dropped once it ends however it ends. A body that fails while read
 * (connection dropped) errors as `upstream_error`; an abort stays an abort. Pull-based:
 * backpressure reaches the upstream body.
 */
export function cancellableStream<T>(source: ReadableStream<T>, abort: LinkedAbort): ReadableStream<T> {
  const onEnd = abort.unlink;
  const reader = source.getReader();
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      onEnd();
    }
  };
  return new ReadableStream<T>(
    {
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            end();
            controller.close();
          } else controller.enqueue(value);
        } catch (error) {
          end();
          const upstreamFailed = !abort.signal.aborted && !(error instanceof ProviderError);
          controller.error(upstreamFailed ? new ProviderError('upstream_error', { accepted: true }) : error);
        }
      },
      async cancel(reason) {
        abort.abort();
        end();
        await reader.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
