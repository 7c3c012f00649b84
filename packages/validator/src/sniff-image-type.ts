import { decodeBase64 } from './decode-base64';

/** Image media types recognised from their leading bytes. */
export type SniffedImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * The image media type of some bytes, read from their magic numbers (PNG, JPEG, WebP, GIF), or
 * undefined. Declared types are never trusted: a reply's `mime_type` and a reference's check use this.
 * @example
 * sniffImageType(bytes) // 'image/png'
 */
export function sniffImageType(bytes: Uint8Array): SniffedImageType | undefined {
  if (startsWith(bytes, PNG_SIGNATURE)) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  // RIFF....WEBP: the 4 size bytes in between are not checked (a truncated header still sniffs).
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes.subarray(8), [0x57, 0x45, 0x42, 0x50])) {
    return 'image/webp';
  }
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) {
    return 'image/gif';
  }
  return undefined;
}

/**
 * {@link sniffImageType} of base64 text (an upstream's `b64_json`), decoding only its first 16
 * characters (12 bytes), so a 20 MB image costs nothing to sniff.
 * @example
 * sniffBase64ImageType('iVBORw0KGgoAAAANSUhEUg') // 'image/png'
 */
export function sniffBase64ImageType(b64: string): SniffedImageType | undefined {
  // Skip leading whitespace, then take 16 data characters (whitespace inside is rare; decodeBase64 skips it).
  let start = 0;
  while (start < b64.length && /\s/.test(b64.charAt(start))) start++;
  const end = Math.min(b64.length, start + 16);
  const usable = end - start - ((end - start) % 4);
  if (usable < 4) return undefined;
  const head = decodeBase64(b64, start, start + usable);
  return head === undefined ? undefined : sniffImageType(head);
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  return prefix.every((byte, index) => bytes[index] === byte);
}
