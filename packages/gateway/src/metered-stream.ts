import { BODY_SOURCE, type BodySource, type ByteSink, type ErrorCode, GatewayError, type LazyBody, type Timers, type Usage } from '@tollgate/core';
import { type ChunkBatches, ProviderError } from '@tollgate/providers';
import { batchBytes } from './batch-bytes';
import { createKeepalive } from '@tollgate/sse';

/** How a metered stream ended: read to its end, left by its client (or cut for taking nothing), or failed (or stalled) upstream. */
export type StreamOutcome = 'done' | 'client_gone' | 'upstream_failed';

/** How a metered stream ended, for its settlement. */
export interface StreamEnd {
  /** Which side ended it. */
  outcome: StreamOutcome;
  /** The error's code, when the upstream failed or stalled. */
  code?: ErrorCode;
}

/** An upstream that answered: its items in batches, and its first read when one is already under way. */
export interface OpenedUpstream<T> {
  /** The upstream's items (a web stream's reader: `batchesOfReader` of @tollgate/providers). */
  batches: ChunkBatches<T>;
  /** A read of `batches` already under way (the gateway waits for the first event before answering). */
  first?: Promise<T[] | undefined>;
}

/** How the client's bytes are made from the upstream's items: rewritten SSE, or the same bytes. */
export interface StreamFormat<T> {
  /** The bytes for one upstream item, or undefined to read on. Throws on an item no provider should send. */
  item(value: T): Uint8Array | undefined;
  /**
   * The bytes for a batch of items, as one chunk (what `item` gives for each, joined), or undefined
   * to read on. Without it, the stream joins what `item` gives.
   */
  items?(values: readonly T[]): Uint8Array | undefined;
  /** The bytes that end a stream the upstream finished (the usage chunk and `[DONE]`), if any. */
  done(): Uint8Array | undefined;
  /**
   * The event that ends a stream whose upstream failed or stalled. Without it (pass-through bytes,
   * which the gateway never adds to) a broken body errors and a stalled one just ends.
   */
  errorEvent?(code: ErrorCode): Uint8Array;
  /** The comment sent after `keepaliveMs` without an event; none when absent. */
  keepalive?: Uint8Array;
}

/** A format that also says what it delivered, for the settlement of what a stream delivered. */
export interface DeliveringFormat<T> extends StreamFormat<T> {
  /** Usage as the upstream reported it, when it did (well-formed only). */
  readonly usage: Usage | undefined;
  /** Text and tool-call arguments the client was sent (for the early-stop charge). */
  readonly delivered: string;
}

/** Options of {@link createMeteredStream}. */
export interface MeteredStreamOptions<T> {
  /** The upstream, or a promise of it while it has not answered yet (a rejection is a failure before any event). */
  upstream: OpenedUpstream<T> | Promise<OpenedUpstream<T>>;
  /** How the client's bytes are made. */
  format: StreamFormat<T>;
  /** Aborts the upstream call: aborted whenever the stream ends any other way than done. */
  abort: AbortController;
  /** The client's request signal: its abort is a client that left. */
  signal: AbortSignal;
  /** Frees the request's in-flight slot; called once, as soon as the stream ends. */
  releaseSlot(): unknown;
  /** Pays for what was delivered (or releases the hold); called once, after the upstream was let go. */
  settle(end: StreamEnd): Promise<unknown>;
  /** Receives what `settle` threw (it must never take the stream down or go unseen). */
  report(error: unknown): void;
  /** Told each time the client was sent the bytes of upstream items (a batch at a time: the crash checkpoints' touch); must be cheap. */
  onDelivered?(): void;
  /** Quiet time before a keepalive comment. */
  keepaliveMs: number;
  /** Upstream silence that fails an open stream: no item while a read waits on it. */
  idleTimeoutMs: number;
  /**
   * How long the client may take none of the bytes waiting for it before it is treated as gone
   * (`client_gone`); default `idleTimeoutMs`.
   */
  clientStallTimeoutMs?: number;
  /** How long an upstream still opening may take to answer and send its first event, from `startedAt`. */
  headersTimeoutMs: number;
  /** When the upstream call started (unix ms). */
  startedAt: number;
  timers: Timers;
  now: () => number;
}

/** A metered stream: the client's body, and a promise that resolves once its settlement is written. */
export interface MeteredStream {
  /** The body's stream (made on first access: a server taking `lazyBody` never makes it). */
  readonly body: ReadableStream<Uint8Array>;
  /** The same body, its stream made only when asked for: what a LeanReply of @tollgate/core takes. */
  lazyBody: LazyBody;
  finished: Promise<void>;
}

/**
 * The one owner of a streamed request's lifecycle, for the SSE rewrite and the tee pass-through
 * alike: the in-flight slot, settlement (exactly once), the idle and stall watch, the upstream's
 * deadline to answer, and aborts. The body is pull-based (`highWaterMark: 0`), so the upstream is
 * read only as fast as the client reads (back-pressure: nothing is buffered for a slow client).
 * However it ends — upstream done, failed or stalled, the client cancelling its body, the client's
 * request signal aborting, a client that takes nothing for `clientStallTimeoutMs` — the slot is
 * freed at once, the upstream call aborted and cancelled, and then `settle` runs once with what
 * happened.
 *
 * @example
 * const { body, finished } = createMeteredStream({ upstream: opened, format, abort, signal: request.signal,
 *   releaseSlot, settle: (end) => hold.settle(costOf(end)), report, ...timing });
 * return { response: new Response(body, { headers }), finished };
 */
export function createMeteredStream<T>(options: MeteredStreamOptions<T>): MeteredStream {
  // The closures below keep what they use, not `options`: its `upstream` holds the first batch (and
  // the upstream text it is sliced from) for as long as the stream is open.
  const { format, timers, now, signal, abort, releaseSlot, settle, report, onDelivered, idleTimeoutMs, headersTimeoutMs } = options;
  let reader: ChunkBatches<T> | undefined;
  let pendingRead: Promise<T[] | undefined> | undefined;
  let opening: Promise<OpenedUpstream<T>> | undefined;
  if (options.upstream instanceof Promise) {
    opening = options.upstream;
    // A stream that ends before its client pulled never awaits the upstream: let it go once it answers.
    opening.then(
      (opened) => {
        if (ended && reader === undefined) opened.batches.cancel().catch(() => undefined);
      },
      () => undefined,
    );
  } else {
    reader = options.upstream.batches;
    pendingRead = options.upstream.first;
  }
  /** Where the bytes go: the body stream's controller, or the sink's outlet once a sink took them; none while nobody took the body. */
  let controllerRef: Outlet | undefined;
  /** The body stream, once someone asked for it (see `makeStream`), and its own controller. */
  let stream: ReadableStream<Uint8Array> | undefined;
  let streamController: ReadableStreamDefaultController<Uint8Array> | undefined;
  let ended = false;
  // The idle clock: since when we wait on the upstream (still opening, or a read pending) or,
  // between reads, on the client. Only upstream silence is an upstream stall; a client that does
  // not read must not be reported as a provider failure (backpressure keeps the upstream unread
  // meanwhile): it is cut after its own limit.
  let waitingOnUpstream = opening !== undefined;
  let since = opening ? options.startedAt : now();
  let idleTimer: unknown;
  let resolveFinished: () => void = () => {};
  const finished = new Promise<void>((resolve) => (resolveFinished = resolve));

  const keepaliveBytes = format.keepalive;
  const keepalive =
    keepaliveBytes === undefined
      ? undefined
      : createKeepalive({
          intervalMs: options.keepaliveMs,
          timers,
          now,
          onKeepalive: () => {
            if (!ended) controllerRef?.enqueue(keepaliveBytes);
          },
        });

  const end = (result: StreamEnd) => {
    if (ended) return;
    ended = true;
    letBodyGo();
    keepalive?.stop();
    timers.clearTimeout(idleTimer);
    signal.removeEventListener('abort', onClientGone);
    // The slot is free as soon as the stream ends; the request stays active until it is settled.
    void releaseSlot();
    let letGo: Promise<unknown> = Promise.resolve();
    if (result.outcome !== 'done') {
      // Cancel first, so a pass-through provider settles the usage it saw; the abort also stops an
      // upstream still opening. A stream that ended on its own has nothing to stop (and abort()
      // builds a DOMException with a stack trace, measurable on every request).
      if (reader) letGo = reader.cancel().catch(() => undefined);
      abort.abort();
    }
    // What the stream held is let go now, not when the settlement below is written: its closures
    // keep this scope until then, and under load it would outlive two scavenges and be promoted
    // (docs/benchmarks.md, "Issue #17, fifth pass").
    reader = undefined;
    pendingRead = undefined;
    stream = undefined;
    streamController = undefined;
    controllerRef = undefined;
    sink = undefined;
    letGo
      .then(() => settle(result))
      .catch((error: unknown) => report(error))
      .finally(resolveFinished);
  };

  const fail = (code: ErrorCode, error?: unknown) => {
    if (ended) return;
    // Nobody took the body yet: its stream keeps the error event for whoever reads it.
    if (controllerRef === undefined) makeStream();
    const controller = controllerRef as Outlet;
    if (format.errorEvent) {
      controller.enqueue(format.errorEvent(code));
      controller.close();
    } else if (error === undefined) controller.close();
    else controller.error(error);
    end({ outcome: 'upstream_failed', code });
  };

  function onClientGone(): void {
    if (ended) return;
    try {
      controllerRef?.close();
    } catch {
      // Already closed or errored by the runtime: nothing more to send either way.
    }
    end({ outcome: 'client_gone' });
  }

  // One lazily re-armed timer, not one per chunk. An upstream silent past its limit while we wait
  // on it fails the stream; a client that took nothing for `clientStallTimeoutMs` is treated as
  // gone (its body ends: a client that reads again finds what was queued, then the end). The
  // timer never sleeps longer than the shorter of the two limits, so when the wait passes from one
  // side to the other (the clock restarts) the new side's deadline is still met exactly.
  const clientStallMs = options.clientStallTimeoutMs ?? idleTimeoutMs;
  const shortestMs = Math.min(idleTimeoutMs, clientStallMs);
  const watchIdle = () => {
    if (ended) return;
    const limit = opening ? headersTimeoutMs : waitingOnUpstream ? idleTimeoutMs : clientStallMs;
    const idle = now() - since;
    if (idle < limit) {
      idleTimer = timers.setTimeout(watchIdle, Math.min(limit - idle, shortestMs));
      return;
    }
    if (waitingOnUpstream) fail('upstream_error');
    else onClientGone();
  };

  /** The body's stream was read (or cancelled): its bytes can no longer be written to a sink. */
  let pulled = false;
  /**
   * The body's pull-based stream, made when someone asks for it (`body`, `lazyBody.stream()`, or an
   * error event to keep): a server that takes the source instead (@tollgate/node's listener, through
   * a LeanReply) never makes it. Made after a sink took the bytes, or after the end, it is empty.
   */
  function makeStream(): ReadableStream<Uint8Array> {
    if (stream !== undefined) return stream;
    const made = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          streamController = controller;
          if (sink !== undefined || ended) return controller.close();
          controllerRef = controller;
        },
        pull: (controller) => {
          pulled = true;
          return forward(controller);
        },
        cancel() {
          pulled = true;
          // The client went away: let the upstream go and pay for what was delivered.
          end({ outcome: 'client_gone' });
        },
      },
      { highWaterMark: 0 },
    );
    stream = made;
    Object.defineProperty(made, BODY_SOURCE, { value: offer, writable: true });
    return made;
  }

  // The same bytes written to a sink (BODY_SOURCE of @tollgate/core; @tollgate/node's listener takes
  // it): batches taken with `readNow` as the upstream's socket has them, each written at once, and
  // the next read only when the sink still takes bytes — back-pressure as the pull-based body's,
  // with no promise, stream read or async frame per event (each would live until the next event).
  let sink: ByteSink | undefined;
  /** The sink wants no more until `resume`. */
  let paused = false;
  /** In `pump`'s loop (a wake or resume meanwhile has nothing to do). */
  let pumping = false;
  /** A promised read is under way (the first, or batches without `readNow`). */
  let reading = false;
  const outlet: Outlet = {
    enqueue(bytes) {
      if ((sink as ByteSink).write(bytes) || paused) return;
      paused = true;
      // From now on the stream waits on its client (a keepalive that filled the sink while the
      // upstream was awaited included): an event the upstream sends meanwhile is not read until
      // `resume`, so only the client's stall limit applies.
      if (!reading) {
        waitingOnUpstream = false;
        since = now();
      }
    },
    close: () => sink?.end(),
    error: (reason) => sink?.error(reason),
  };
  const wake = () => pump();
  const source: BodySource = {
    start(target) {
      sink = target;
      controllerRef = outlet;
      if (!opening) return pump();
      opening.then(
        (opened) => {
          opening = undefined;
          reader = opened.batches;
          pendingRead = opened.first;
          // Ended (client gone, deadline) while the upstream was answering: let this one go too.
          if (ended) reader.cancel().catch(() => undefined);
          else pump();
        },
        (error: unknown) => fail(codeOf(error)),
      );
    },
    resume() {
      paused = false;
      pump();
    },
    cancel() {
      end({ outcome: 'client_gone' });
    },
  };
  /** The source, once, while nobody read the body and the stream goes on; else undefined (read the stream). */
  let given = false;
  function offer(): BodySource | undefined {
    if (given || pulled || ended || stream?.locked) return undefined;
    given = true;
    return source;
  }
  const lazyBody: LazyBody = { stream: makeStream, source: offer };
  // The client's signal and the idle watch start with the stream, whoever takes its body and when
  // (a client gone already ends it here: its body then offers nothing and its stream is empty).
  if (signal.aborted) onClientGone();
  else {
    signal.addEventListener('abort', onClientGone, { once: true });
    watchIdle();
  }
  return new Metered(lazyBody, finished);

  /**
   * The stream ended: its body lets go of this stream's state (the source hook, the maker of a
   * stream nobody asked for, and the stream's algorithms when a sink took the bytes and nobody read
   * it), which would otherwise live as long as whoever keeps the Response — long enough, under
   * load, to be promoted to the old generation.
   */
  function letBodyGo(): void {
    // Made outside this function: a closure made here would keep all of the stream's state.
    lazyBody.source = offerNothing;
    const made = stream;
    lazyBody.stream = streamMaker(made);
    if (made === undefined) return;
    (made as unknown as Record<symbol, unknown>)[BODY_SOURCE] = offerNothing;
    if (sink === undefined) return;
    try {
      streamController?.close();
    } catch {
      // Closed already: nothing to let go.
    }
  }

  /** Sends one batch (undefined: the end) to `to`; what it made of the stream: ended, bytes sent, or nothing to send (read on). */
  function deliver(to: Outlet, batch: T[] | undefined): Delivered {
    waitingOnUpstream = false;
    since = now();
    try {
      if (batch === undefined) {
        const last = format.done();
        if (last) to.enqueue(last);
        to.close();
        end({ outcome: 'done' });
        return ENDED;
      }
      keepalive?.touch();
      // An item of a shape no provider should send: the provider failed, never the gateway.
      const { bytes, failure } = batchBytes(format, batch);
      if (bytes !== undefined) {
        to.enqueue(bytes);
        onDelivered?.();
      }
      if (failure) {
        fail(codeOf(failure.error));
        return ENDED;
      }
      return bytes === undefined ? NOTHING : SENT;
    } catch (error) {
      fail(codeOf(error));
      return ENDED;
    }
  }

  /** Writes what the upstream has to the sink until it has no more now (then waits for it) or the sink is full. */
  function pump(): void {
    if (pumping || reading || ended || paused) return;
    const batches = reader;
    if (batches === undefined) return; // still opening
    pumping = true;
    try {
      for (;;) {
        if (pendingRead !== undefined || batches.readNow === undefined || batches.whenReadable === undefined) {
          readPromised(batches);
          return;
        }
        // The idle clock starts when the wait does: bytes that make no whole event yet do not restart it.
        if (!waitingOnUpstream) {
          waitingOnUpstream = true;
          since = now();
        }
        let batch: T[] | undefined | null;
        try {
          batch = batches.readNow();
        } catch (error) {
          fail(codeOf(error), error);
          return;
        }
        if (ended) return;
        if (batch === null) {
          batches.whenReadable(wake);
          return;
        }
        if (deliver(outlet, batch) === ENDED || paused) return;
      }
    } finally {
      pumping = false;
    }
  }

  /** One promised read for the sink: the first (already under way), or each of batches without `readNow`. */
  function readPromised(batches: ChunkBatches<T>): void {
    reading = true;
    waitingOnUpstream = true;
    since = now();
    const read = pendingRead ?? batches.read();
    pendingRead = undefined;
    read.then(
      (batch) => {
        reading = false;
        if (ended) return;
        if (deliver(outlet, batch) !== ENDED && !paused) pump();
      },
      (error: unknown) => {
        reading = false;
        fail(codeOf(error), error);
      },
    );
  }

  async function forward(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    if (opening) {
      let opened: OpenedUpstream<T>;
      try {
        opened = await opening;
      } catch (error) {
        fail(codeOf(error));
        return;
      }
      opening = undefined;
      reader = opened.batches;
      pendingRead = opened.first;
      if (ended) {
        // Ended (client gone, deadline) while the upstream was answering: let this one go too.
        reader.cancel().catch(() => undefined);
        return;
      }
    }
    const source = reader;
    if (!source) return;
    for (;;) {
      let batch: T[] | undefined;
      waitingOnUpstream = true;
      since = now();
      try {
        const read = pendingRead ?? source.read();
        pendingRead = undefined;
        batch = await read;
      } catch (error) {
        fail(codeOf(error), error);
        return;
      }
      if (ended) return;
      if (deliver(controller, batch) !== NOTHING) return;
    }
  }
}

/**
 * What {@link createMeteredStream} returns. A class, not an object literal with a `get body()`: V8
 * gives each such literal its own accessor (a map of its own, in the old generation) holding the
 * getter's closure, so every stream's whole scope outlived young-generation GCs and was promoted.
 */
class Metered implements MeteredStream {
  constructor(
    readonly lazyBody: LazyBody,
    readonly finished: Promise<void>,
  ) {}

  get body(): ReadableStream<Uint8Array> {
    return this.lazyBody.stream();
  }
}

/** Where the stream's bytes go: the body stream's controller, or the writer to a sink. */
interface Outlet {
  enqueue(bytes: Uint8Array): void;
  close(): void;
  error(reason: unknown): void;
}

/** What {@link createMeteredStream}'s `deliver` made of a batch: the stream ended (done, or failed), bytes went out, or nothing to send (read on). */
const ENDED = 0;
const SENT = 1;
const NOTHING = 2;
type Delivered = typeof ENDED | typeof SENT | typeof NOTHING;

/** What a body that ended offers under BODY_SOURCE: nothing (read its stream). */
function offerNothing(): undefined {
  return undefined;
}

/**
 * What a body that ended answers for its stream: the one it made, else (nobody asked for it, and
 * its bytes went to a sink or nowhere) an empty one, made once. Module-level, so the closure keeps
 * only that stream.
 */
function streamMaker(made: ReadableStream<Uint8Array> | undefined): () => ReadableStream<Uint8Array> {
  let stream = made;
  return () => (stream ??= new ReadableStream<Uint8Array>({ start: (controller) => controller.close() }));
}

/** The catalogue code of an upstream failure; anything unknown is `upstream_error`. */
function codeOf(error: unknown): ErrorCode {
  return error instanceof ProviderError || error instanceof GatewayError ? error.code : 'upstream_error';
}
