import { type ErrorCode, GatewayError, type Timers, type Usage } from '@tollgate/core';
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
  body: ReadableStream<Uint8Array>;
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
  const { format, timers, now, signal } = options;
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
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
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
    keepalive?.stop();
    timers.clearTimeout(idleTimer);
    signal.removeEventListener('abort', onClientGone);
    // The slot is free as soon as the stream ends; the request stays active until it is settled.
    void options.releaseSlot();
    let letGo: Promise<unknown> = Promise.resolve();
    if (result.outcome !== 'done') {
      // Cancel first, so a pass-through provider settles the usage it saw; the abort also stops an
      // upstream still opening. A stream that ended on its own has nothing to stop (and abort()
      // builds a DOMException with a stack trace, measurable on every request).
      if (reader) letGo = reader.cancel().catch(() => undefined);
      options.abort.abort();
    }
    letGo
      .then(() => options.settle(result))
      .catch((error: unknown) => options.report(error))
      .finally(resolveFinished);
  };

  const fail = (code: ErrorCode, error?: unknown) => {
    const controller = controllerRef;
    if (ended || !controller) return;
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
  const clientStallMs = options.clientStallTimeoutMs ?? options.idleTimeoutMs;
  const shortestMs = Math.min(options.idleTimeoutMs, clientStallMs);
  const watchIdle = () => {
    if (ended) return;
    const limit = opening ? options.headersTimeoutMs : waitingOnUpstream ? options.idleTimeoutMs : clientStallMs;
    const idle = now() - since;
    if (idle < limit) {
      idleTimer = timers.setTimeout(watchIdle, Math.min(limit - idle, shortestMs));
      return;
    }
    if (waitingOnUpstream) fail('upstream_error');
    else onClientGone();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controllerRef = controller;
        if (signal.aborted) return onClientGone();
        signal.addEventListener('abort', onClientGone, { once: true });
        watchIdle();
      },
      pull: (controller) => forward(controller),
      cancel() {
        // The client went away: let the upstream go and pay for what was delivered.
        end({ outcome: 'client_gone' });
      },
    },
    { highWaterMark: 0 },
  );
  return { body, finished };

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
      waitingOnUpstream = false;
      since = now();
      try {
        if (batch === undefined) {
          const last = format.done();
          if (last) controller.enqueue(last);
          controller.close();
          end({ outcome: 'done' });
          return;
        }
        keepalive?.touch();
        // An item of a shape no provider should send: the provider failed, never the gateway.
        const { bytes, failure } = batchBytes(format, batch);
        if (bytes !== undefined) {
          controller.enqueue(bytes);
          options.onDelivered?.();
        }
        if (failure) fail(codeOf(failure.error));
        else if (bytes === undefined) continue;
      } catch (error) {
        fail(codeOf(error));
      }
      return;
    }
  }
}

/** The catalogue code of an upstream failure; anything unknown is `upstream_error`. */
function codeOf(error: unknown): ErrorCode {
  return error instanceof ProviderError || error instanceof GatewayError ? error.code : 'upstream_error';
}
