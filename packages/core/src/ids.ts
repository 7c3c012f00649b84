const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const POOL_SIZE = 4096;
let pool = new Uint8Array(0);
let offset = 0;

/**
 * Random base62 characters from a pooled CSPRNG buffer: one `getRandomValues` call serves many
 * ids, so the hot path makes no crypto call per id. Rejection sampling keeps every character
 * equally likely.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    if (offset >= pool.length) {
      pool = crypto.getRandomValues(new Uint8Array(POOL_SIZE));
      offset = 0;
    }
    // `offset` is inside the pool here; the fallback (a rejected byte) only satisfies the index type.
    const byte = pool[offset++] ?? 255;
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** A new chat completion id: `chatcmpl-` and 29 base62 characters. */
export function completionId(): string {
  return `chatcmpl-${randomBase62(29)}`;
}

/** A new request id for `X-Request-Id`: `req_` and 24 base62 characters. */
export function requestId(): string {
  return `req_${randomBase62(24)}`;
}
