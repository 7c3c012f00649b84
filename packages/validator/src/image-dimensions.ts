/** Pixel dimensions of an image. */
export interface ImageDimensions {
  /** Width in pixels (> 0). */
  width: number;
  /** Height in pixels (> 0). */
  height: number;
}

/**
 * Width and height read from an image header: PNG IHDR, JPEG SOFn, WebP VP8/VP8L/VP8X, GIF
 * logical screen. Undefined for anything else or a damaged header; never throws, and the JPEG
 * segment walk is linear in the input (each step moves forward by at least 2 bytes).
 * @example
 * imageDimensions(parsed.bytes) // { width: 1024, height: 768 }
 */
export function imageDimensions(bytes: Uint8Array): ImageDimensions | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 24 && bytes[0] === 0x89 && ascii(bytes, 1, 'PNG') && ascii(bytes, 12, 'IHDR')) {
    return checked(view.getUint32(16), view.getUint32(20));
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8) return jpegDimensions(bytes, view);
  if (bytes.length >= 16 && ascii(bytes, 0, 'RIFF') && ascii(bytes, 8, 'WEBP')) return webpDimensions(bytes, view);
  if (bytes.length >= 10 && ascii(bytes, 0, 'GIF8')) {
    return checked(view.getUint16(6, true), view.getUint16(8, true));
  }
  return undefined;
}

function jpegDimensions(bytes: Uint8Array, view: DataView): ImageDimensions | undefined {
  let position = 2;
  while (position < bytes.length) {
    if (bytes[position] !== 0xff) return undefined;
    // Any number of 0xFF fill bytes may precede a marker.
    while (position < bytes.length && bytes[position] === 0xff) position++;
    if (position >= bytes.length) return undefined;
    const marker = bytes[position] as number;
    position++;
    // Markers without a length: TEM and RST0-RST7 (SOI would be a second image start: damaged).
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue;
    // End of image or start of scan before any frame header: no dimensions to read.
    if (marker === 0xd9 || marker === 0xda || marker === 0xd8) return undefined;
    if (position + 2 > bytes.length) return undefined;
    const length = view.getUint16(position);
    if (length < 2) return undefined;
    // SOF0-SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC) in that range.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (length < 7 || position + 7 > bytes.length) return undefined;
      // Height 0 means "defined later by a DNL marker": not readable from the header.
      return checked(view.getUint16(position + 5), view.getUint16(position + 3));
    }
    position += length;
  }
  return undefined;
}

function webpDimensions(bytes: Uint8Array, view: DataView): ImageDimensions | undefined {
  if (ascii(bytes, 12, 'VP8 ')) {
    // Lossy: 3-byte frame tag, start code 9D 01 2A, then 14-bit width and height (2 scale bits above).
    if (bytes.length < 30 || bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined;
    return checked(view.getUint16(26, true) & 0x3fff, view.getUint16(28, true) & 0x3fff);
  }
  if (ascii(bytes, 12, 'VP8L')) {
    // Lossless: signature 0x2F, then width-1 and height-1 as two 14-bit fields, little-endian.
    if (bytes.length < 25 || bytes[20] !== 0x2f) return undefined;
    const bits = view.getUint32(21, true);
    return checked((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(bytes, 12, 'VP8X')) {
    // Extended: flags and 3 reserved bytes, then canvas width-1 and height-1 as 24-bit little-endian.
    if (bytes.length < 30) return undefined;
    return checked(uint24(bytes, 24) + 1, uint24(bytes, 27) + 1);
  }
  return undefined;
}

function uint24(bytes: Uint8Array, offset: number): number {
  return (bytes[offset] as number) | ((bytes[offset + 1] as number) << 8) | ((bytes[offset + 2] as number) << 16);
}

function checked(width: number, height: number): ImageDimensions | undefined {
  if (!(width > 0 && height > 0 && width <= 0x7fffffff && height <= 0x7fffffff)) return undefined;
  return { width, height };
}

function ascii(bytes: Uint8Array, offset: number, text: string): boolean {
  if (offset + text.length > bytes.length) return false;
  for (let index = 0; index < text.length; index++) {
    if (bytes[offset + index] !== text.charCodeAt(index)) return false;
  }
  return true;
}
