import { type BodyReader, type BodyReadResult, bodyReader } from '@tollgate/core';
import { createSseParser, type SseEvent } from '@tollgate/sse';
import { type ChunkBatch, type ChunkBatches, ProviderError } from '../provider';
import { linkAbort } from './link-abort';

/** Where an adapter's event steps put their chunks, or the error that ends the stream. */
export interface ChunkSink<T> {
  /** Adds a chunk; `json`, the text it was parsed from and is still exactly (see `ChunkBatch`), where the step has it. */
  enqueue(chunk: T, json?: string): void;
  error(reason: unknown): void;
}

/** A sink whose step may also end the stream early (an explicit end event such as OpenAI's `[DONE]`). */
export interface ClosingChunkSink<T> extends ChunkSink<T> {
  /** Ends the stream after this step's chunks; the rest of the body is not read. */
  close(): void;
}

/**
 * An adapter's translation of an upstream's SSE events into chunks, event by event: the body of a
 * `TransformStream` (its controller is a sink) or of {@link sseChunkBatches}.
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
  /** `texts[i]`: the JSON text of `chunks[i]`, where the step gave one. */
  texts: (string | undefined)[] | undefined;
  failed = false;
  closed = false;
  reason: unknown;
  close(): void {
    if (!this.failed) this.closed = true;
  }
  enqueue(chunk: T, json?: string): void {
    if (this.failed) return;
    if (json !== undefined) {
      this.texts ??= [];
      this.texts[this.chunks.length] = json;
    }
    this.chunks.push(chunk);
  }
  /** Empties the sink for the next step. */
  clear(): void {
    this.chunks.length = 0;
    this.texts = undefined;
  }
  error(reason: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.reason = reason;
    // An error drops what the same step enqueued, as a TransformStream's does.
    this.clear();
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
 * own without one, see {@link linkAbort}), and the 2xx body comes back as {@link sseChunkBatches}'
 * batches of chunks. A body that fails while read (connection dropped) errors as
 * `upstream_error`; an abort stays an abort; what `steps` errors with passes as it is (anything
 * but a ProviderError is `upstream_error`).
 * @example
 * return openUpstreamStream(options.signal, (signal) => postJson(target, body, signal, mapError), anthropicSteps());
 */
export async function openUpstreamStream<T>(
  signal: AbortSignal | undefined,
  post: (signal: AbortSignal) => Promise<Response>,
  steps: SseSteps<T>,
): Promise<ChunkBatches<T>> {
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
  return sseChunkBatches(response, steps, link, { step: failure, read: failure });
}

/**
 * The chunks of a 2xx SSE reply, `steps` turning its events into chunks, as batches: each read
 * reads the body (through {@link bodyReader}: no web stream where the runtime offers its own
 * reader) until its events gave chunks, and answers every chunk of the events read by then, so
 * that what one upstream read brought goes on as one batch. The body is read again only when the
 * next batch is asked for, so back-pressure reaches the upstream. A step that closes the sink ends
 * the batches there (the rest of the body is let go); an error met after chunks of the same batch
 * is thrown by the next read, so they are not dropped. The upstream is let go (`link`, and the
 * body cancelled unless it ended) before the caller sees the end or the error; `cancel` cuts it.
 */
export function sseChunkBatches<T>(response: Response, steps: SseSteps<T, ClosingChunkSink<T>>, link: UpstreamLink, errors: SseStreamErrors): ChunkBatches<T> {
  const reader = bodyReader(response);
  if (reader === null) {
    link.unlink();
    throw new ProviderError('upstream_error', { accepted: true, status: response.status });
  }
  return reader.readNow !== undefined && reader.whenReadable !== undefined
    ? new SyncSseChunkBatches(reader, steps, link, errors)
    : new SseChunkBatches(reader, steps, link, errors);
}

/** {@link sseChunkBatches}' reads: one at a time, as a reader's. */
class SseChunkBatches<T> implements ChunkBatches<T> {
  readonly #events: SseEvent[] = [];
  readonly #parser = createSseParser((event) => this.#events.push(event));
  readonly #sink = new StepSink<T>();
  #next = 0;
  #bodyDone = false;
  /** The upstream was let go. */
  #over = false;
  /** Every later read answers the end (closed by a step, or cancelled). */
  #closed = false;
  /** The error every later read throws: met after chunks of the same batch (not thrown yet), or thrown. */
  #failure: { reason: unknown; thrown: boolean } | undefined;

  constructor(
    readonly reader: BodyReader,
    readonly steps: SseSteps<T, ClosingChunkSink<T>>,
    readonly link: UpstreamLink,
    readonly errors: SseStreamErrors,
  ) {}

  /** Lets the upstream go, once: `cut` aborts the call too (a stream that did not end on its own). */
  async #end(cut: boolean): Promise<void> {
    if (this.#over) return;
    this.#over = true;
    this.link.unlink();
    if (cut) this.link.abort();
    if (cut || !this.#bodyDone) await this.reader.cancel().catch(() => undefined);
  }

  /** Runs the step of one event (the flush without one), its chunks (and their texts) added to `out`; false when it failed. */
  #run(out: ChunkBatch<T>, event?: SseEvent): boolean {
    const sink = this.#sink;
    try {
      if (event === undefined) this.steps.flush(sink);
      else this.steps.transform(event, sink);
    } catch (error) {
      sink.error(error);
    }
    if (sink.failed) return false;
    const { chunks, texts } = sink;
    for (let index = 0; index < chunks.length; index++) {
      const text = texts?.[index];
      if (text !== undefined) {
        out.texts ??= [];
        out.texts[out.length] = text;
      }
      out.push(chunks[index] as T);
    }
    // Emptied for the next step as soon as the chunks are in the batch (a failed step's sink is
    // emptied by its error): the sink lives until the next event, a drip apart, and the step's
    // chunks and the upstream text their texts are slices of would outlive young-generation GCs.
    sink.clear();
    return true;
  }

  /** Letting the upstream go, once started (what a read that answers the end or an error waits for). */
  #ending: Promise<void> | undefined;

  /** Ends the batches with an error, thrown by this read and every later one (the upstream being let go). */
  #throw(reason: unknown): never {
    this.#ending = this.#end(true);
    const error = this.#failure?.thrown ? this.#failure.reason : reason;
    this.#failure = { reason: error, thrown: true };
    throw error;
  }

  /**
   * What the events parsed so far answer: a batch, the end (the upstream being let go), or `null`
   * when the body must be read on (`out` still empty). Throws what a read rejects with.
   */
  #answer(out: ChunkBatch<T>): ChunkBatch<T> | undefined | null {
    const failure = this.#failure;
    if (failure) this.#throw(failure.thrown ? failure.reason : this.errors.step(failure.reason));
    if (this.#closed) return undefined;
    const events = this.#events;
    const sink = this.#sink;
    while (this.#next < events.length) {
      if (!this.#run(out, events[this.#next++] as SseEvent)) {
        if (out.length > 0) {
          this.#failure = { reason: sink.reason, thrown: false };
          return out;
        }
        this.#throw(this.errors.step(sink.reason));
      }
      if (sink.closed) {
        this.#closed = true;
        this.#ending = this.#end(false);
        return out.length > 0 ? out : undefined;
      }
    }
    if (out.length > 0) return out;
    events.length = 0;
    this.#next = 0;
    // The parser refused the body (a line or an event past its bound): the events before it went on.
    if (this.#unparsable !== undefined) this.#throw(this.errors.step(this.#unparsable));
    if (!this.#bodyDone) return null;
    const ok = this.#run(out);
    // The body is over: nothing to cancel.
    this.#ending = this.#end(false);
    if (!ok) this.#throw(this.errors.step(sink.reason));
    this.#closed = true;
    return out.length > 0 ? out : undefined;
  }

  /** What the parser threw (`SseEventTooLongError`): the reply is broken once the events before it are answered. */
  #unparsable: unknown;

  /** Feeds one read of the body to the parser; false when the batches were cancelled meanwhile. */
  #feed(read: BodyReadResult): boolean {
    if (this.#closed) return false;
    try {
      if (read.done) {
        this.#bodyDone = true;
        // A last event without its closing blank line still counts.
        this.#parser.end();
      } else {
        this.#parser.push(read.value);
      }
    } catch (error) {
      this.#unparsable = error;
    }
    return true;
  }

  /** A failed read of the body: the end when cancelled meanwhile (the cancel's own abort failed it), else thrown as a read error. */
  #readFailed(error: unknown): undefined {
    if (this.#closed) return undefined;
    return this.#throw(this.errors.read(error));
  }

  /** {@link ChunkBatches.readNow}, on a reader that has `readNow`. */
  protected takeNow(): ChunkBatch<T> | undefined | null {
    const out: ChunkBatch<T> = [];
    const reader = this.reader as Required<BodyReader>;
    for (;;) {
      const answer = this.#answer(out);
      if (answer !== null) return answer;
      let read: BodyReadResult | null;
      try {
        read = reader.readNow();
      } catch (error) {
        return this.#readFailed(error);
      }
      if (read === null) return null;
      if (!this.#feed(read)) return undefined;
    }
  }

  async read(): Promise<ChunkBatch<T> | undefined> {
    const out: ChunkBatch<T> = [];
    for (;;) {
      let answer: ChunkBatch<T> | undefined | null;
      try {
        answer = this.#answer(out);
      } catch (error) {
        await this.#ending;
        throw error;
      }
      if (answer !== null) {
        if (answer === undefined) await this.#ending;
        return answer;
      }
      let read: BodyReadResult;
      try {
        read = await this.reader.read();
      } catch (error) {
        try {
          return this.#readFailed(error);
        } catch (thrown) {
          await this.#ending;
          throw thrown;
        }
      }
      if (!this.#feed(read)) return undefined;
    }
  }

  async cancel(): Promise<void> {
    // An error not thrown yet is dropped with the rest: every later read answers the end.
    if (!this.#failure?.thrown) this.#failure = undefined;
    this.#closed = true;
    await this.#end(true);
  }
}

/**
 * {@link SseChunkBatches} on a reader that answers what it has now (`readNow`): batches taken with
 * no promise per read (`readNow`, waiting with `whenReadable`), for a consumer that can wait with a
 * callback (the gateway's metered stream, written to @tollgate/node's listener).
 */
class SyncSseChunkBatches<T> extends SseChunkBatches<T> {
  readNow(): ChunkBatch<T> | undefined | null {
    return this.takeNow();
  }

  whenReadable(wake: () => void): void {
    (this.reader as Required<BodyReader>).whenReadable(wake);
  }
}
