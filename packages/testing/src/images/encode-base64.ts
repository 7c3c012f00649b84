const ALPHABET = new TextEncoder().encode('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');

/**
 * Standard padded base64 of bytes, built as ASCII bytes and decoded once: fast for megabytes,
 * with no `Buffer` (library code runs on any runtime) and no per-byte string concatenation.
 * @example
 * encodeBase64(new Uint8Array([102, 111, 111])) // 'Zm9v'
 */
export function encodeBase64(bytes: Uint8Array): string {
  const output = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
  const whole = bytes.length - (bytes.length % 3);
  let written = 0;
  for (let index = 0; index < whole; index += 3) {
    const triple = ((bytes[index] as number) << 16) | ((bytes[index + 1] as number) << 8) | (bytes[index + 2] as number);
    output[written++] = ALPHABET[triple >> 18] as number;
    output[written++] = ALPHABET[(triple >> 12) & 63] as number;
    output[written++] = ALPHABET[(triple >> 6) & 63] as number;
    output[written++] = ALPHABET[triple & 63] as number;
  }
  const left = bytes.length - whole;
  if (left > 0) {
    const first = bytes[whole] as number;
    const second = left === 2 ? (bytes[whole + 1] as number) : 0;
    const triple = (first << 16) | (second << 8);
    output[written++] = ALPHABET[triple >> 18] as number;
    output[written++] = ALPHABET[(triple >> 12) & 63] as number;
    output[written++] = left === 2 ? (ALPHABET[(triple >> 6) & 63] as number) : 0x3d;
    output[written++] = 0x3d;
  }
  return new TextDecoder().decode(output);
}
