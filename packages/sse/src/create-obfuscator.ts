/** Options of {@link createObfuscator}. */
export interface ObfuscatorOptions {
  /** Fills a buffer with random bytes; defaults to `crypto.getRandomValues`. */
  random?: (bytes: Uint8Array) => void;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const POOL_SIZE = 4096;
const MIN_LENGTH = 16;
const LENGTHS = 49; // 16..64 inclusive
// The largest multiple of 49 under 256: bytes at or above it are redrawn so lengths stay uniform.
const LENGTH_LIMIT = 245;

/**
 * Makes the `obfuscation` padding of stream chunks: 16 to 64 (uniform) URL-safe random characters.
 * Bytes come from a pooled buffer refilled once per 4 KiB, so a chunk costs no crypto call.
 *
 * @example
 * const obfuscation = createObfuscator();
 * chunk.obfuscation = obfuscation();
 */
export function createObfuscator(options: ObfuscatorOptions = {}): () => string {
  const random = options.random ?? ((bytes: Uint8Array) => void crypto.getRandomValues(bytes));
  const pool = new Uint8Array(POOL_SIZE);
  let offset = POOL_SIZE;

  function next(): number {
    if (offset >= POOL_SIZE) {
      random(pool);
      offset = 0;
    }
    return pool[offset++]!;
  }

  return () => {
    let byte = next();
    while (byte >= LENGTH_LIMIT) byte = next();
    const length = MIN_LENGTH + (byte % LENGTHS);
    let out = '';
    // 64 characters: the low six bits pick one with no bias.
    for (let i = 0; i < length; i++) out += ALPHABET[next() & 63];
    return out;
  };
}
