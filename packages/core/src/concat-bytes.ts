/**
 * The chunks of a body as one fresh `Uint8Array` of exactly their length, over an `ArrayBuffer` of
 * its own (never a view into a chunk's buffer, which on Node may be a shared pool): the one copy of
 * "read a body's chunks, then join them" that the validator, the providers, the gateway and
 * @tollgate/node use.
 *
 * @example
 * concatBytes([new Uint8Array([1, 2]), new Uint8Array([3])]); // Uint8Array [1, 2, 3]
 */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  let length = 0;
  for (const chunk of chunks) length += chunk.byteLength;
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
