import { concatBytes, type Result, systemTimers, type Timers } from '@tollgate/core';
import { fail, type Fail, type Invalid } from './fail';

/** Options of {@link readBody}. */
export interface ReadBodyOptions {
  /** Most bytes taken; default 32 MiB. */
  maxBytes?: number;
  /** When the request began (ms, on the `now` clock); default `now()` at the call. */
  startedAt?: number;
  /** Time the whole body may take from `startedAt`; default 60,000 ms. */
  timeoutMs?: number;
  /** The clock; default `Date.now`. */
  now?: () => number;
  /** The timers; default the global ones. */
  timers?: Timers;
}

/** The result of {@link readBody}. */
export type ReadBodyResult = Result<Uint8Array, Invalid>;

/** The spec's body size limit. */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The spec's body arrival time. */
export const BODY_TIMEOUT_MS = 60_000;

const TIMED_OUT = Symbol('timed out');

/**
 * Reads a request body whatever its Content-Type: `request_too_large` when Content-Length or the
 * bytes counted while reading pass the cap, `request_timeout` when the body is not complete by the
 * deadline. A body with a Content-Length within the cap is read whole with `arrayBuffer()` (on
 * Node, `@tollgate/node`'s request reads it with no web stream; node:http ends such a body at its
 * declared length or errors it); one without is read chunk by chunk, counting against the cap.
 *
 * @example
 * const body = await readBody(request, { startedAt });
 * if (!body.ok) return new GatewayError(body.error.code, { message: body.error.message }).toResponse();
 */
export async function readBody(request: Request, options: ReadBodyOptions = {}): Promise<ReadBodyResult> {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const now = options.now ?? Date.now;
  const timers = options.timers ?? systemTimers;
  const deadline = (options.startedAt ?? now()) + (options.timeoutMs ?? BODY_TIMEOUT_MS);
  const tooLarge = fail('request_too_large', `The request body is larger than ${maxBytes} bytes.`);

  const declared = request.headers.get('content-length');
  const length = declared !== null && /^\s*\d+\s*$/.test(declared) ? Number(declared) : undefined;
  if (length !== undefined && length > maxBytes) return tooLarge;
  // A compressed body is refused, not inflated: 32 MiB of gzip can inflate to gigabytes (docs/http-api.md).
  if (!isIdentity(request.headers.get('content-encoding')))
    return fail('invalid_request_body', 'The request body must not be compressed: send it without Content-Encoding.');
  if (request.bodyUsed) return fail('invalid_request_body', 'The request body was already read.');
  if (length !== undefined) return readWhole(request, maxBytes, deadline, now, timers, tooLarge);
  if (request.body === null) return { ok: true, value: new Uint8Array(0) };

  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  // One timer for the whole body: a read pending at the deadline loses the race.
  let handle: unknown;
  const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
    handle = timers.setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - now()));
  });
  const stop = (result: Fail): Fail => {
    reader.cancel().catch(() => undefined);
    return result;
  };
  try {
    for (;;) {
      let step: ReadableStreamReadResult<Uint8Array> | typeof TIMED_OUT;
      try {
        step = await Promise.race([reader.read(), timedOut]);
      } catch {
        return fail('invalid_request_body', 'The request body could not be read to its end.');
      }
      if (step === TIMED_OUT) return stop(fail('request_timeout', 'The request body did not arrive within the time allowed.'));
      if (step.done) break;
      total += step.value.byteLength;
      if (total > maxBytes) return stop(tooLarge);
      chunks.push(step.value);
    }
  } finally {
    timers.clearTimeout(handle);
  }
  // A body that ends after the deadline but before the timer ran (a busy event loop) is still late.
  if (now() > deadline) return fail('request_timeout', 'The request body did not arrive within the time allowed.');
  return { ok: true, value: chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks) };
}

/**
 * A body of declared length, read with `arrayBuffer()` against the deadline. The cap is checked on
 * the bytes got too: another runtime's Request may give more than its Content-Length said.
 */
async function readWhole(request: Request, maxBytes: number, deadline: number, now: () => number, timers: Timers, tooLarge: Fail): Promise<ReadBodyResult> {
  let handle: unknown;
  const timedOut = new Promise<typeof TIMED_OUT>((resolve) => {
    handle = timers.setTimeout(() => resolve(TIMED_OUT), Math.max(0, deadline - now()));
  });
  let bytes: ArrayBuffer | typeof TIMED_OUT;
  try {
    bytes = await Promise.race([request.arrayBuffer(), timedOut]);
  } catch {
    return fail('invalid_request_body', 'The request body could not be read to its end.');
  } finally {
    timers.clearTimeout(handle);
  }
  // Past the deadline the read is left as it is: a Request's arrayBuffer() cannot be cancelled (on
  // Node, the listener drains or cuts the rest once the response went out).
  const late = fail('request_timeout', 'The request body did not arrive within the time allowed.');
  if (bytes === TIMED_OUT) return late;
  if (bytes.byteLength > maxBytes) return tooLarge;
  // A body that ends after the deadline but before the timer ran (a busy event loop) is still late.
  if (now() > deadline) return late;
  return { ok: true, value: new Uint8Array(bytes) };
}

/** No Content-Encoding, or only `identity` (any case, any list of it). */
function isIdentity(encoding: string | null): boolean {
  return encoding === null || encoding.split(',').every((each) => /^\s*(identity)?\s*$/i.test(each));
}
