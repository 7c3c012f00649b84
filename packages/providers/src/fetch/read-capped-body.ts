import { concatBytes } from '@tollgate/core';
import { raceSignal } from './race-signal';

/** A body read up to a byte cap. */
export interface CappedBody {
  /** At most the cap's bytes. */
  bytes: Uint8Array;
  /** Whether more bytes followed the cap (they were not read: the stream was cancelled). */
  truncated: boolean;
}

/**
 * Reads a body with a byte counter, whatever Content-Length claims: at the cap the rest is
 * cancelled, so a huge or endless body costs at most `maxBytes` of memory.
 *
 * @example
 * const { bytes, truncated } = await readCappedBody(response.body, 5 * 1024 * 1024, signal);
 */
export async function readCappedBody(body: ReadableStream<Uint8Array> | null, maxBytes: number, signal: AbortSignal): Promise<CappedBody> {
  if (body === null) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { done, value } = await raceSignal(reader.read(), signal);
      if (done) break;
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    if (truncated || signal.aborted) reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
  return { bytes: concatBytes(chunks), truncated };
}
