import { createSseParser, type SseEvent } from '@tollgate/sse';
import { ProviderError } from '../provider';
import { linkAbort } from './link-abort';

/** Where an adapter's event steps put their chunks, or the error that ends the stream. */
export interface ChunkSink<T> {
  enqueue(chunk: T): void;
  error(reason: unknown): void;
}

/**
 * An adapter's translation of an upstream's SSE events into chunks, event by event: the body of a
 * `TransformStream` (its controller is a sink) or of {@link openUpstreamStream}'s one stream.
 */
export interface SseSteps<T> {
  /** Turns one event into chunks (or none); errors the sink on an event that ends the stream. */
  transform(event: SseEvent, sink: ChunkSink<T>): void;
  /** At the body's end: the last chunks, or the error of a body that ended too soon. */
  flush(sink: ChunkSink<T>): void;
}

/** The sink of one `transform` or `flush` call: what it enqueued, or the error it ended with. */
class StepSink<T> implements ChunkSink<T> {
  chunks: T[] = [];
  failed = false;
  reason: unknown;
  enqueue(chunk: T): void {
    if (!this.failed) this.chunks.push(chunk);
  }
  error(reason: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.reason = reason;
    // An error drops what the same step enqueued, as a TransformStream's does.
    this.chunks.length = 0;
  }
}

/**
 * Starts a streamed upstream call: `post` runs under the caller's signal (or a controller of our
 * own without one, see {@link linkAbort}), and the 2xx body, its SSE events turned into chunks by
 * `steps`, comes back as one pull-based stream that reads the body's reader itself (no decoder and
 * translator streams in between): the chunks of every event already read go out in one pull, and
 * the body is read again only once they were taken, so back-pressure reaches the upstream. Cancel
 * lets the upstream go (abort and body cancel). A body that fails while read (connection dropped)
 * errors as `upstream_error`; an abort stays an abort; what `steps` errors with passes as it is.
 * @example
 * return openUpstreamStream(options.signal, (signal) => postJson(target, body, signal, mapError), anthropicSteps());
 */
export async function openUpstreamStream<T>(
  signal: AbortSignal | undefined,
  post: (signal: AbortSignal) => Promise<Response>,
  steps: SseSteps<T>,
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
  const reader = response.body.getReader();
  const events: SseEvent[] = [];
  const parser = createSseParser((event) => events.push(event));
  const sink = new StepSink<T>();
  let next = 0;
  let bodyDone = false;
  let over = false;
  // An error met after chunks of the same pull were enqueued: erroring at once would drop them.
  let pending: { reason: unknown } | undefined;
  const end = async (cancel: boolean) => {
    if (over) return;
    over = true;
    abort.unlink();
    if (!cancel) return;
    abort.abort();
    await reader.cancel().catch(() => undefined);
  };
  /** A failure as the consumer sees it: anything but the caller's abort or an adapter's own error is `upstream_error`. */
  const failure = (error: unknown) => (!signal?.aborted && !(error instanceof ProviderError) ? new ProviderError('upstream_error', { accepted: true }) : error);
  /** Runs the step of one event (the flush without one); its chunks are enqueued, or its error kept. False when it failed. */
  const run = (controller: ReadableStreamDefaultController<T>, event?: SseEvent): boolean => {
    sink.chunks.length = 0;
    try {
      if (event === undefined) steps.flush(sink);
      else steps.transform(event, sink);
    } catch (error) {
      sink.error(error);
    }
    if (sink.failed) return false;
    for (const chunk of sink.chunks) controller.enqueue(chunk);
    return true;
  };

  return new ReadableStream<T>(
    {
      async pull(controller) {
        if (pending) {
          await end(true);
          return controller.error(failure(pending.reason));
        }
        let sent = false;
        for (;;) {
          while (next < events.length) {
            if (!run(controller, events[next++] as SseEvent)) {
              if (sent) {
                pending = { reason: sink.reason };
                return;
              }
              await end(true);
              return controller.error(failure(sink.reason));
            }
            if (sink.chunks.length > 0) sent = true;
          }
          if (sent) return;
          events.length = 0;
          next = 0;
          if (bodyDone) {
            if (!run(controller)) {
              // The body is over: nothing to cancel.
              await end(false);
              return controller.error(failure(sink.reason));
            }
            await end(false);
            return controller.close();
          }
          let read: ReadableStreamReadResult<Uint8Array>;
          try {
            read = await reader.read();
          } catch (error) {
            await end(false);
            return controller.error(failure(error));
          }
          if (read.done) {
            bodyDone = true;
            // A last event without its closing blank line still counts.
            parser.end();
          } else {
            parser.push(read.value);
          }
        }
      },
      async cancel() {
        await end(true);
      },
    },
    { highWaterMark: 0 },
  );
}
