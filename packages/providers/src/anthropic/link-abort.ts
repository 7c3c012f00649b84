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
 * Wraps a stream so that cancelling it also runs `onCancel` (abort the upstream fetch), and
 * `onEnd` runs once however it ends. Pull-based: backpressure reaches the upstream body.
 */
export function cancellableStream<T>(source: ReadableStream<T>, onCancel: () => void, onEnd: () => void): ReadableStream<T> {
  const reader = source.getReader();
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      onEnd();
    }
  };
  return new ReadableStream<T>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    async cancel(reason) {
      onCancel();
      end();
      await reader.cancel(reason).catch(() => undefined);
    },
  }, { highWaterMark: 0 });
}
