import { createSseParser, type SseEvent } from '@tollgate/sse';
import { ProviderError } from '../provider';
import { linkAbort } from './link-abort';

/** Where an adapter's event steps put their chunks, or the error that ends the stream. */
export interface ChunkSink<T> {
  enqueue(chunk: T): void;
  error(reason: unknown): void;
}

/** A sink whose step may also end the stream early (an explicit end event such as OpenAI's `[DONE]`). */
export interface ClosingChunkSink<T> extends ChunkSink<T> {
  /** Ends the stream after this step's chunks; the rest of the body is not read. */
  close(): void;
}

/**
 * An adapter's translation of an upstream's SSE events into chunks, event by event: the body of a
 * `TransformStream` (its controller is a sink) or of {@link openUpstreamStream}'s one stream.
 */
export interface SseSteps<T, S extends ChunkSink<T> = ChunkSink<T>> {
  /** Turns one event into chunks (or none); errors the sink on an event that ends the stream. */
  transform(event: SseEvent, sink: S): void;
  /** At the body's end: the last chunks, or the error of a body that ended too soon. */
  flush(sink: S): void;
}

/** The sink of one `transform` or `flush` call: what it enqueued, or the error it ended with. */
class StepSink<T> implements ClosingChunkSink<T> {
  chunks: T[] = [];
  failed = false;
  closed = false;
  reason: unknown;
  close(): void {
    if (!this.failed) this.closed = true;
  }
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

/** How an SSE chunk stream lets its upstream call go (see {@link linkAbort}). */
export interface UpstreamLink {
  /** Aborts the call when it runs under a controller of our own (a stream cut short). */
  abort(): void;
  /** Called once, when the call is over. */
  unlink(): void;
}

/** What an SSE chunk stream errors with, by cause. */
export interface SseStreamErrors {
  /** An event step's error, or a body that ended too soon (the error `steps` gave). */
  step(reason: unknown): unknown;
  /** A read of the body that failed (connection dropped, abort). */
  read(error: unknown): unknown;
}

/**
 * Starts a streamed upstream call: `post` runs under the caller's signal (or a controller of our
 * own without one, see {@link linkAbort}), and the 2xx body comes back as {@link sseChunkStream}'s
 * one stream of chunks. A body that fails while read (connection dropped) errors as
 * `upstream_error`; an abort stays an abort; what `steps` errors with passes as it is (anything
 * but a ProviderError is `upstream_error`).
 * @example
 * return openUpstreamStream(options.signal, (signal) => postJson(target, body, signal, mapError), anthropicSteps());
 */
export async function openUpstreamStream<T>(
  signal: AbortSignal | undefined,
  post: (signal: AbortSignal) => Promise<Response>,
  steps: SseSteps<T>,
): Promise<ReadableStream<T>> {
  const link = linkAbort(signal);
  let response: Response;
  try {
    response = await post(link.signal);
  } catch (error) {
    link.unlink();
    throw error;
  }
  /** A failure as the consumer sees it: anything but the caller's abort or an adapter's own error is `upstream_error`. */
  const failure = (error: unknown) => (!signal?.aborted && !(error instanceof ProviderError) ? new ProviderError('upstream_error', { accepted: true }) : error);
  return sseChunkStream(response, steps, link, { step: failure, read: failure });
}

/**
 * The chunks of a 2xx SSE reply, `steps` turning its events into chunks: one pull-based stream that
 * reads the body's reader itself (no decoder and translator streams in between). The chunks of
 * every event already read go out in one pull, and the body is read again only once they were
 * taken, so back-pressure reaches the upstream. A step that closes the sink ends the stream there
 * (the rest of the body is let go); an error met after chunks of the same pull waits for the next
 * pull, so they are not dropped. The upstream is let go (`link`, and the body cancelled unless it
 * ended) before the consumer sees the end; cancel cuts it.
 */
export function sseChunkStream<T>(response: Response, steps: SseSteps<T, ClosingChunkSink<T>>, link: UpstreamLink, errors: SseStreamErrors): ReadableStream<T> {
  if (!response.body) {
    link.unlink();
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
  /** Lets the upstream go, once: `cut` aborts the call too (a stream that did not end on its own). */
  const end = async (cut: boolean) => {
    if (over) return;
    over = true;
    link.unlink();
    if (cut) link.abort();
    if (cut || !bodyDone) await reader.cancel().catch(() => undefined);
  };
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
          return controller.error(errors.step(pending.reason));
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
              return controller.error(errors.step(sink.reason));
            }
            if (sink.closed) {
              await end(false);
              return controller.close();
            }
            if (sink.chunks.length > 0) sent = true;
          }
          if (sent) return;
          events.length = 0;
          next = 0;
          if (bodyDone) {
            const ok = run(controller);
            // The body is over: nothing to cancel.
            await end(false);
            return ok ? controller.close() : controller.error(errors.step(sink.reason));
          }
          let read: ReadableStreamReadResult<Uint8Array>;
          try {
            read = await reader.read();
          } catch (error) {
            await end(true);
            return controller.error(errors.read(error));
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
