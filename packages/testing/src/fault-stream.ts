import { connectionTerminated, sleep, type Fault } from './fault';

/** Options of {@link faultStream}. */
export interface FaultStreamOptions {
  /** The fault to apply to this body, if any. */
  fault?: Fault;
  /** Aborts the body (the request's signal): the stream errors with the signal's reason. */
  signal?: AbortSignal;
  /** The text sent in place of an event by a `malformed` fault. */
  malformed: string;
  /** The text of the fake's error event for an `error-event` fault. */
  errorEvent?: (fault: Extract<Fault, { kind: 'error-event' }>) => string;
  /** Called once when the body closes, errors or is cancelled (for the fake's `open` count). */
  onClose?: () => void;
  /** Waits between events for `drip` faults; default a real timer. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const encoder = new TextEncoder();
/** What a `flood` fault sends a read: 1 MiB of spaces, made on first use and shared. */
let FLOOD: Uint8Array | undefined;

/**
 * A response body that sends `events` (whole wire texts) one per pull, so a slow reader slows the
 * fake down (backpressure), with a fault applied. Cancelling it, or aborting `signal`, ends it.
 *
 * @example
 * new Response(faultStream(['data: 1\n\n', 'data: [DONE]\n\n'], { fault, malformed: 'data: {\n\n' }));
 */
export function faultStream(events: string[], options: FaultStreamOptions): ReadableStream<Uint8Array> {
  const { fault } = options;
  const wait = options.sleep ?? sleep;
  const stop = new AbortController();
  let sent = 0;
  let closed = false;
  const finish = () => {
    if (closed) return;
    closed = true;
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    options.onClose?.();
  };
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
  const onAbort = () => {
    if (closed) return;
    controllerRef?.error(options.signal?.reason);
    finish();
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controllerRef = controller;
        if (options.signal?.aborted) return onAbort();
        options.signal?.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        if (closed) return;
        const at = sent;
        if (fault && 'afterChunks' in fault && at === fault.afterChunks) {
          if (fault.kind === 'cut') {
            controller.error(connectionTerminated());
            return finish();
          }
          if (fault.kind === 'truncate') {
            controller.close();
            return finish();
          }
          if (fault.kind === 'stall') {
            // Never resolves on its own: only a cancel or an abort ends a stalled body.
            await new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
            return;
          }
          if (fault.kind === 'flood') {
            // `sent` stays where it is: every later read floods too, until a cancel.
            FLOOD ??= new Uint8Array(1 << 20).fill(0x20);
            controller.enqueue(FLOOD);
            return;
          }
          if (fault.kind === 'error-event' && options.errorEvent) {
            controller.enqueue(encoder.encode(options.errorEvent(fault)));
            controller.close();
            return finish();
          }
        }
        if (at >= events.length) {
          controller.close();
          return finish();
        }
        if (fault?.kind === 'drip') {
          try {
            await wait(fault.delayMs, stop.signal);
          } catch {
            return;
          }
          if (closed) return;
        }
        const text = fault?.kind === 'malformed' && at === fault.afterChunks ? options.malformed : (events[at] ?? '');
        sent++;
        controller.enqueue(encoder.encode(text));
      },
      cancel() {
        finish();
      },
    },
    // One event at a time: the fake produces only what the reader asks for.
    { highWaterMark: 0 },
  );
}
