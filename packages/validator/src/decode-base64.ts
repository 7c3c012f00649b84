/** Lookup table: base64 character code -> 6-bit value; -1 invalid, -2 ASCII whitespace (skipped). */
const TABLE: Int8Array = (() => {
  const table = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let index = 0; index < alphabet.length; index++) table[alphabet.charCodeAt(index)] = index;
  for (const space of [0x09, 0x0a, 0x0c, 0x0d, 0x20]) table[space] = -2;
  return table;
})();

/**
 * Decodes standard base64 (RFC 4648 §4) into bytes, or undefined when it is not valid base64.
 * One native copy to bytes, then one pass with a lookup table into a preallocated Uint8Array: a 20 MB data URL
 * must not go through `atob` and a per-byte binary string. ASCII whitespace is skipped (as `atob`
 * does, for line-wrapped input); `=` padding is optional but, when present, must be correct.
 */
export function decodeBase64(input: string, start = 0, end = input.length): Uint8Array | undefined {
  let stop = end;
  let padding = 0;
  // Trailing whitespace and padding are trimmed first so the main loop sees only data characters.
  while (stop > start && isSpace(input.charCodeAt(stop - 1))) stop--;
  while (stop > start && input.charCodeAt(stop - 1) === 0x3d && padding < 2) {
    stop--;
    padding++;
    while (stop > start && isSpace(input.charCodeAt(stop - 1))) stop--;
  }
  if (stop - start < 0) return undefined;
  const output = new Uint8Array(Math.floor(((stop - start) * 3) / 4));
  // TextEncoder turns the string into bytes natively (one copy), and a byte loop beats charCodeAt;
  // any non-ASCII character becomes bytes >= 0x80, which the table refuses.
  const ascii = new TextEncoder().encode(start === 0 && stop === input.length ? input : input.slice(start, stop));
  const fast = decodeQuads(ascii, output);
  if (fast >= 0) {
    const remainder = (stop - start) % 4;
    if (!validPadding(remainder, padding)) return undefined;
    return fast === output.length ? output : output.subarray(0, fast);
  }
  // Whitespace or a bad character somewhere: the general loop sorts out which.
  let written = 0;
  let buffer = 0;
  let bits = 0;
  let count = 0;
  for (let position = 0; position < ascii.length; position++) {
    const value = TABLE[ascii[position] as number] as number;
    if (value === -2) continue;
    if (value === -1) return undefined;
    buffer = ((buffer << 6) | value) & 0xffffff;
    bits += 6;
    count++;
    if (bits >= 8) {
      bits -= 8;
      output[written++] = (buffer >> bits) & 0xff;
    }
  }
  if (!validPadding(count % 4, padding)) return undefined;
  return written === output.length ? output : output.subarray(0, written);
}

/**
 * The hot path: four characters to three bytes with no per-character branching. Returns the bytes
 * written, or -1 at the first character that is not in the alphabet (whitespace included).
 */
function decodeQuads(ascii: Uint8Array, output: Uint8Array): number {
  let written = 0;
  let position = 0;
  const stop = ascii.length;
  const whole = stop - (stop % 4);
  for (; position < whole; position += 4) {
    const a = TABLE[ascii[position] as number] as number;
    const b = TABLE[ascii[position + 1] as number] as number;
    const c = TABLE[ascii[position + 2] as number] as number;
    const d = TABLE[ascii[position + 3] as number] as number;
    if ((a | b | c | d) < 0) return -1;
    output[written++] = (a << 2) | (b >> 4);
    output[written++] = ((b & 15) << 4) | (c >> 2);
    output[written++] = ((c & 3) << 6) | d;
  }
  let buffer = 0;
  let bits = 0;
  for (; position < stop; position++) {
    const value = TABLE[ascii[position] as number] as number;
    if (value < 0) return -1;
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      output[written++] = (buffer >> bits) & 0xff;
    }
  }
  return written;
}

/** A data length (mod 4) and the padding seen must agree; one character alone is never valid. */
function validPadding(remainder: number, padding: number): boolean {
  if (remainder === 1) return false;
  return padding === 0 || (remainder !== 0 && 4 - remainder === padding);
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09 || code === 0x0c;
}
