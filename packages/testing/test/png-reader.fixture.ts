import { crc32 } from '../src/images/crc32';

/** One PNG chunk as read back in tests. */
export interface PngChunk {
  type: string;
  data: Uint8Array;
  crcMatches: boolean;
}

/** Splits a PNG into its chunks after checking the signature; throws on a broken structure. */
export function readPngChunks(png: Uint8Array): PngChunk[] {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((byte, index) => png[index] === byte)) throw new Error('not a PNG signature');
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const chunks: PngChunk[] = [];
  let offset = 8;
  while (offset < png.length) {
    const length = view.getUint32(offset);
    const type = new TextDecoder().decode(png.subarray(offset + 4, offset + 8));
    const data = png.subarray(offset + 8, offset + 8 + length);
    const stored = view.getUint32(offset + 8 + length);
    chunks.push({ type, data, crcMatches: stored === crc32(png, offset + 4, offset + 8 + length) });
    offset += 12 + length;
  }
  return chunks;
}

/** Inflates zlib data with the web-standard DecompressionStream. */
export async function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** RGB pixels of an 8-bit RGB PNG whose rows use filters None (0) or Up (2), the ones makePng writes. */
export function unfilterRgb(raw: Uint8Array, width: number, height: number): Uint8Array {
  const stride = 1 + width * 3;
  const pixels = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * stride];
    for (let index = 0; index < width * 3; index++) {
      const value = raw[y * stride + 1 + index] as number;
      const above = y > 0 ? (pixels[(y - 1) * width * 3 + index] as number) : 0;
      if (filter === 0) pixels[y * width * 3 + index] = value;
      else if (filter === 2) pixels[y * width * 3 + index] = (value + above) & 0xff;
      else throw new Error(`unexpected filter ${String(filter)}`);
    }
  }
  return pixels;
}
