/**
 * Test fixtures: real image headers built byte by byte (only the bytes the readers look at, plus
 * enough of the real structure around them to catch a reader that scans instead of walking).
 */

/** Concatenates byte arrays and plain numbers. */
export function bytesOf(...parts: (Uint8Array | number[] | string)[]): Uint8Array {
  const arrays = parts.map((part) => (typeof part === 'string' ? new TextEncoder().encode(part) : Uint8Array.from(part)));
  const output = new Uint8Array(arrays.reduce((sum, array) => sum + array.length, 0));
  let offset = 0;
  for (const array of arrays) {
    output.set(array, offset);
    offset += array.length;
  }
  return output;
}

const be16 = (value: number) => [(value >> 8) & 0xff, value & 0xff];
const be32 = (value: number) => [(value >>> 24) & 0xff, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
const le16 = (value: number) => [value & 0xff, (value >> 8) & 0xff];
const le24 = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff];
const le32 = (value: number) => [...le16(value & 0xffff), ...le16(value >>> 16)];

/** A PNG signature and IHDR chunk (RGB, 8 bits), CRC left as zeros: the reader does not check it. */
export function pngHeader(width: number, height: number): Uint8Array {
  return bytesOf([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], be32(13), 'IHDR', be32(width), be32(height), [8, 2, 0, 0, 0], [0, 0, 0, 0]);
}

/** A JPEG marker segment: FF, marker, big-endian length (payload + 2), payload. */
function segment(marker: number, payload: number[] | Uint8Array): Uint8Array {
  return bytesOf([0xff, marker], be16(payload.length + 2), payload);
}

/** A frame header payload: precision, height, width, three components. */
function frame(width: number, height: number): number[] {
  return [8, ...be16(height), ...be16(width), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
}

/** Baseline JPEG: SOI, APP0 JFIF, DQT, SOF0, then SOS and a little scan data. */
export function baselineJpeg(width: number, height: number): Uint8Array {
  return bytesOf(
    [0xff, 0xd8],
    segment(0xe0, bytesOf('JFIF', [0, 1, 1, 0, 0, 1, 0, 1, 0, 0])),
    segment(0xdb, new Array(65).fill(1)),
    segment(0xc0, frame(width, height)),
    segment(0xda, [3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]),
    [0x12, 0x34, 0xff, 0x00, 0xff, 0xd9],
  );
}

/**
 * Progressive JPEG as cameras write it: EXIF (APP1) whose payload holds bytes that look like a
 * SOF0 marker, a DHT (C4, inside the SOF range but not a frame) whose payload looks like a frame,
 * fill bytes before the marker, then SOF2.
 */
export function progressiveJpegWithExif(width: number, height: number): Uint8Array {
  const exif = bytesOf('Exif', [0, 0], 'MM', [0, 0x2a, 0, 0, 0, 8], [0xff, 0xc0, 0, 17, 8, 0, 1, 0, 1], new Array(40).fill(0xff));
  return bytesOf(
    [0xff, 0xd8],
    segment(0xe1, exif),
    segment(0xc4, frame(7, 7)),
    [0xff, 0xff, 0xff],
    segment(0xc2, frame(width, height)),
    segment(0xda, [3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]),
    [0xff, 0xd9],
  );
}

/** A JPEG whose frame header says height 0 (height defined later by DNL). */
export function jpegWithDnlHeight(width: number): Uint8Array {
  return bytesOf([0xff, 0xd8], segment(0xc0, frame(width, 0)), [0xff, 0xd9]);
}

function riff(chunk: string, payload: Uint8Array): Uint8Array {
  return bytesOf('RIFF', le32(4 + 8 + payload.length), 'WEBP', chunk, le32(payload.length), payload);
}

/** Lossy WebP (VP8): frame tag, start code, 14-bit sizes with the scale bits set to prove they are masked. */
export function webpLossy(width: number, height: number): Uint8Array {
  return riff('VP8 ', bytesOf([0x30, 0x01, 0x00], [0x9d, 0x01, 0x2a], le16(width | 0x4000), le16(height | 0xc000), [0, 0]));
}

/** Lossless WebP (VP8L): signature 0x2F, then (width-1) | (height-1) << 14 | alpha << 28, little-endian. */
export function webpLossless(width: number, height: number): Uint8Array {
  const bits = ((width - 1) | ((height - 1) << 14) | (1 << 28)) >>> 0;
  return riff('VP8L', bytesOf([0x2f], le32(bits), [0, 0, 0]));
}

/** Extended WebP (VP8X): flags (alpha), 3 reserved, 24-bit canvas width-1 and height-1. */
export function webpExtended(width: number, height: number): Uint8Array {
  return riff('VP8X', bytesOf([0x10, 0, 0, 0], le24(width - 1), le24(height - 1)));
}

/** A GIF89a header with its logical screen size. */
export function gifHeader(width: number, height: number): Uint8Array {
  return bytesOf('GIF89a', le16(width), le16(height), [0, 0, 0]);
}

/** Standard base64 of bytes, with the web-standard btoa. */
export function base64Of(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
