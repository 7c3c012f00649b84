/** Width and height in pixels. */
export interface Dimensions {
  width: number;
  height: number;
}

// JPEG can put large EXIF blocks before its frame header; this much base64 covers common files.
const PREFIX_CHARS = 256 * 1024;

/**
 * The size of a PNG, JPEG or WebP image from the header of its base64 data, decoding only a prefix;
 * `undefined` when the header cannot be read.
 */
export function imageDimensions(base64: string): Dimensions | undefined {
  let bytes: string;
  try {
    bytes = atob(base64.slice(0, Math.min(base64.length, PREFIX_CHARS) & ~3));
  } catch {
    return undefined;
  }
  const at = (i: number) => bytes.charCodeAt(i);
  const be16 = (i: number) => (at(i) << 8) | at(i + 1);
  const le16 = (i: number) => at(i) | (at(i + 1) << 8);
  const le24 = (i: number) => at(i) | (at(i + 1) << 8) | (at(i + 2) << 16);
  if (bytes.startsWith('\x89PNG\r\n\x1a\n') && bytes.length >= 24) {
    return valid({ width: be16(16) * 65536 + be16(18), height: be16(20) * 65536 + be16(22) });
  }
  if (bytes.startsWith('RIFF') && bytes.slice(8, 12) === 'WEBP' && bytes.length >= 30) {
    const chunk = bytes.slice(12, 16);
    if (chunk === 'VP8 ') return valid({ width: le16(26) & 0x3fff, height: le16(28) & 0x3fff });
    if (chunk === 'VP8L') {
      return valid({ width: 1 + (((at(22) & 0x3f) << 8) | at(21)), height: 1 + (((at(24) & 0x0f) << 10) | (at(23) << 2) | ((at(22) & 0xc0) >> 6)) });
    }
    if (chunk === 'VP8X') return valid({ width: 1 + le24(24), height: 1 + le24(27) });
    return undefined;
  }
  if (at(0) === 0xff && at(1) === 0xd8) return jpegDimensions(bytes);
  return undefined;
}

function jpegDimensions(bytes: string): Dimensions | undefined {
  let i = 2;
  while (i + 9 < bytes.length) {
    if (bytes.charCodeAt(i) !== 0xff) return undefined;
    const marker = bytes.charCodeAt(i + 1);
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) {
      i += 2; // markers without a length
      continue;
    }
    // SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = (bytes.charCodeAt(i + 5) << 8) | bytes.charCodeAt(i + 6);
      const width = (bytes.charCodeAt(i + 7) << 8) | bytes.charCodeAt(i + 8);
      return valid({ width, height });
    }
    i += 2 + ((bytes.charCodeAt(i + 2) << 8) | bytes.charCodeAt(i + 3));
  }
  return undefined;
}

function valid(size: Dimensions): Dimensions | undefined {
  return size.width > 0 && size.height > 0 ? size : undefined;
}
