import { crc32 } from './crc32';

/** Options of {@link makePng}. */
export interface MakePngOptions {
  /** Picks the gradient's colours and slopes, so different seeds give different images (default 0). */
  seed?: number;
  /** A solid colour instead of the seeded gradient. */
  rgb?: [number, number, number];
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * A real, decodable PNG (8-bit RGB, zlib IDAT, CRC per chunk) of a diagonal gradient seeded by
 * `seed`. Every row after the first uses the Up filter with a constant delta, so the filtered rows
 * are identical and deflate to almost nothing: a 1024x1024 image takes a few milliseconds and a few kB.
 * @example
 * const png = await makePng(1024, 576, { seed: 7 });
 */
export async function makePng(width: number, height: number, options: MakePngOptions = {}): Promise<Uint8Array> {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1 || width * height > 1 << 26) {
    throw new RangeError(`makePng takes positive integer sizes up to 64 Mpx, not ${width}x${height}`);
  }
  const { base, across, down } = palette(options);
  const stride = 1 + width * 3;
  const raw = new Uint8Array(stride * height);
  // Row 0, filter None: base + x * across, per channel, wrapping at 256 (a soft sawtooth).
  for (let x = 0; x < width; x++) {
    for (let channel = 0; channel < 3; channel++) {
      raw[1 + x * 3 + channel] = ((base[channel] as number) + x * (across[channel] as number)) & 0xff;
    }
  }
  if (height > 1) {
    // Row 1, filter Up: each byte is the delta from the row above, the same everywhere.
    const up = raw.subarray(stride, 2 * stride);
    up[0] = 2;
    for (let x = 0; x < width; x++) up.set(down, 1 + x * 3);
    for (let y = 2; y < height; y++) raw.copyWithin(y * stride, stride, 2 * stride);
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour RGB, deflate, adaptive filtering, no interlace
  return concat([Uint8Array.from(SIGNATURE), chunk('IHDR', header), chunk('IDAT', await deflate(raw)), chunk('IEND', new Uint8Array(0))]);
}

function palette(options: MakePngOptions): { base: number[]; across: number[]; down: number[] } {
  if (options.rgb) return { base: options.rgb.map((value) => value & 0xff), across: [0, 0, 0], down: [0, 0, 0] };
  const random = mulberry32(options.seed ?? 0);
  const byte = () => Math.floor(random() * 256);
  const slope = () => Math.floor(random() * 3) - 1; // -1, 0 or 1 per pixel: gentle gradients
  return { base: [byte(), byte(), byte()], across: [slope(), slope(), 1], down: [1, slope(), slope()] };
}

/** A small seeded PRNG: the same seed gives the same image on every runtime. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** zlib (RFC 1950) deflate, which is what CompressionStream calls 'deflate' and PNG's IDAT holds. */
async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const output = new Uint8Array(12 + data.length);
  const view = new DataView(output.buffer);
  view.setUint32(0, data.length);
  output.set(new TextEncoder().encode(type), 4);
  output.set(data, 8);
  // The CRC covers the type and the data, not the length.
  view.setUint32(8 + data.length, crc32(output, 4, 8 + data.length));
  return output;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const output = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    output.set(part, offset);
    offset += part.length;
  }
  return output;
}
