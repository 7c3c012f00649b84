import { concatBytes } from '@tollgate/core';
import type { StreamFormat } from './metered-stream';

/**
 * The client's bytes for a batch, as one chunk: the format's `items` (all or none: it throws), or
 * what `item` gives for each, joined, up to an item that throws (its error is `failure`; the
 * items before it still go out).
 */
export function batchBytes<T>(format: StreamFormat<T>, batch: readonly T[]): { bytes: Uint8Array | undefined; failure?: { error: unknown } } {
  if (format.items) return { bytes: format.items(batch) };
  if (batch.length === 1) return { bytes: format.item(batch[0] as T) };
  const parts: Uint8Array[] = [];
  for (const value of batch) {
    try {
      const part = format.item(value);
      if (part !== undefined) parts.push(part);
    } catch (error) {
      return { bytes: joined(parts), failure: { error } };
    }
  }
  return { bytes: joined(parts) };
}

const joined = (parts: Uint8Array[]) => (parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : concatBytes(parts));
