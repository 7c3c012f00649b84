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
const CODES = Uint8Array.from(ALPHABET, (character) => character.charCodeAt(0));
// The alphabet is ASCII, so decoding the codes as UTF-8 gives the characters one for one.
const ascii = new TextDecoder();

/**
 * Makes the `obfuscation` padding of stream chunks: 16 to 64 (uniform) URL-safe random characters.
 * Bytes come from a pooled buffer refilled once per 4 KiB, mapped to characters once per refill,
 * so a value is a slice of that string: no crypto call and no per-character concatenation per chunk.
 *
 * @example
 * const obfuscation = createObfuscator();
 * chunk.obfuscation = obfuscation();
 */
export function createObfuscator(options: ObfuscatorOptions = {}): () => string {
  const random = options.random ?? ((bytes: Uint8Array) => void crypto.getRandomValues(bytes));
  const pool = new Uint8Array(POOL_SIZE);
  const mapped = new Uint8Array(POOL_SIZE);
  // The pool's bytes as characters (the low six bits pick one of 64, with no bias).
  let characters = '';
  let offset = POOL_SIZE;

  function refill(): void {
    random(pool);
    // Indexes stay inside both arrays; the `?? 0` fallbacks only satisfy the index types.
    for (let i = 0; i < POOL_SIZE; i++) mapped[i] = CODES[(pool[i] ?? 0) & 63] ?? 0;
    characters = ascii.decode(mapped);
    offset = 0;
  }

  function next(): number {
    if (offset >= POOL_SIZE) refill();
    return pool[offset++] ?? 0;
  }

  return () => {
    let byte = next();
    while (byte >= LENGTH_LIMIT) byte = next();
    const length = MIN_LENGTH + (byte % LENGTHS);
    if (offset >= POOL_SIZE) refill();
    const end = offset + length;
    if (end <= POOL_SIZE) {
      const out = characters.slice(offset, end);
      offset = end;
      return out;
    }
    // The value runs past the pool: its tail comes from the next fill, as byte-by-byte reads would.
    let out = characters.slice(offset);
    const rest = length - out.length;
    refill();
    out += characters.slice(0, rest);
    offset = rest;
    return out;
  };
}
