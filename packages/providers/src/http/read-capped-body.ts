import { bodyReader, concatBytes } from '@tollgate/core';
import { raceSignal } from '../fetch/race-signal';

/** A body read up to a byte cap. */
export interface CappedBody {
  /** At most the cap's bytes. */
  bytes: Uint8Array;
  /** Whether more bytes followed the cap (they were not read: the body was cancelled). */
  truncated: boolean;
}

/**
 * Reads a response's body with a byte counter, whatever Content-Length claims: at the cap the rest
 * is cancelled, so a huge or endless body costs at most `maxBytes` of memory. Read through
 * `bodyReader` (no web stream where the runtime offers its own reader); with a `signal`, a read
 * that ignores it still ends when it aborts. A failed read rejects (the body cancelled). With
 * `over: 'refuse'` a body past the cap rejects with a `RangeError` instead, its bytes let go
 * unjoined: a refused body costs at most the cap, not the cap twice.
 *
 * @example
 * const { bytes, truncated } = await readCappedBody(response, 5 * 1024 * 1024, signal);
 */
export async function readCappedBody(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
  over: 'truncate' | 'refuse' = 'truncate',
): Promise<CappedBody> {
  const reader = bodyReader(response);
  if (reader === null) return { bytes: new Uint8Array(0), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const read = reader.readNow?.() ?? (await (signal ? raceSignal(reader.read(), signal) : reader.read()));
      if (read.done) break;
      const value = read.value;
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } catch (error) {
    reader.cancel().catch(() => undefined);
    throw error;
  }
  if (truncated) {
    reader.cancel().catch(() => undefined);
    if (over === 'refuse') throw new RangeError(`reply over ${maxBytes} bytes`);
  }
  // One chunk (a short reply) is handed over as it is: a view, never written to here.
  return { bytes: chunks.length === 1 ? (chunks[0] as Uint8Array) : concatBytes(chunks), truncated };
}
