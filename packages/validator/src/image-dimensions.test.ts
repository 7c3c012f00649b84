import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { imageDimensions } from './image-dimensions';
import {
  baselineJpeg,
  bytesOf,
  gifHeader,
  jpegWithDnlHeight,
  pngHeader,
  progressiveJpegWithExif,
  webpExtended,
  webpLossless,
  webpLossy,
} from '../test/image-headers.fixture';

describe('imageDimensions', () => {
  it('reads the PNG IHDR', () => {
    expect(imageDimensions(pngHeader(1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageDimensions(pngHeader(1, 70000))).toEqual({ width: 1, height: 70000 });
  });

  it('reads a baseline JPEG SOF0 after APP0 and DQT', () => {
    expect(imageDimensions(baselineJpeg(640, 480))).toEqual({ width: 640, height: 480 });
  });

  it('reads a progressive JPEG SOF2 after EXIF, a DHT and fill bytes', () => {
    expect(imageDimensions(progressiveJpegWithExif(4032, 3024))).toEqual({ width: 4032, height: 3024 });
  });

  it('reads the other SOFn markers and skips DHT, JPG and DAC', () => {
    const sof1 = baselineJpeg(300, 200);
    const at = sof1.findIndex((byte, index) => byte === 0xff && sof1[index + 1] === 0xc0);
    for (const marker of [0xc1, 0xc3, 0xc5, 0xc9, 0xcb, 0xcd, 0xcf]) {
      const copy = sof1.slice();
      copy[at + 1] = marker;
      expect(imageDimensions(copy)).toEqual({ width: 300, height: 200 });
    }
    for (const marker of [0xc4, 0xc8, 0xcc]) {
      const copy = sof1.slice();
      copy[at + 1] = marker;
      // The segment is skipped; the walk then reaches SOS with no frame header.
      expect(imageDimensions(copy)).toBeUndefined();
    }
  });

  it('gives undefined for a JPEG whose height waits for a DNL marker', () => {
    expect(imageDimensions(jpegWithDnlHeight(800))).toBeUndefined();
  });

  it('reads WebP lossy (VP8), masking the scale bits', () => {
    expect(imageDimensions(webpLossy(1920, 1080))).toEqual({ width: 1920, height: 1080 });
  });

  it('reads WebP lossless (VP8L)', () => {
    expect(imageDimensions(webpLossless(1, 1))).toEqual({ width: 1, height: 1 });
    expect(imageDimensions(webpLossless(16384, 9000))).toEqual({ width: 16384, height: 9000 });
    expect(imageDimensions(webpLossless(1536, 1024))).toEqual({ width: 1536, height: 1024 });
  });

  it('reads WebP extended (VP8X) canvas size', () => {
    expect(imageDimensions(webpExtended(5000, 300))).toEqual({ width: 5000, height: 300 });
    expect(imageDimensions(webpExtended(16777216, 1))).toEqual({ width: 16777216, height: 1 });
  });

  it('reads the GIF logical screen', () => {
    expect(imageDimensions(gifHeader(320, 240))).toEqual({ width: 320, height: 240 });
  });

  it('refuses zero sizes and unknown formats', () => {
    expect(imageDimensions(pngHeader(0, 10))).toBeUndefined();
    expect(imageDimensions(bytesOf('BM', new Array(40).fill(1)))).toBeUndefined();
    expect(imageDimensions(new Uint8Array(0))).toBeUndefined();
  });

  it('reads a subarray view at a non-zero offset', () => {
    const padded = bytesOf([1, 2, 3], pngHeader(33, 44));
    expect(imageDimensions(padded.subarray(3))).toEqual({ width: 33, height: 44 });
  });

  it('gives undefined or the right size for every truncation of every fixture', () => {
    const fixtures = [
      pngHeader(9, 8),
      baselineJpeg(9, 8),
      progressiveJpegWithExif(9, 8),
      webpLossy(9, 8),
      webpLossless(9, 8),
      webpExtended(9, 8),
      gifHeader(9, 8),
    ];
    for (const fixture of fixtures) {
      for (let length = 0; length <= fixture.length; length++) {
        const result = imageDimensions(fixture.subarray(0, length));
        if (result !== undefined) expect(result).toEqual({ width: 9, height: 8 });
      }
      expect(imageDimensions(fixture)).toEqual({ width: 9, height: 8 });
    }
  });

  it('never throws on garbage, including garbage behind a real signature', () => {
    const prefixes = [[], [0xff, 0xd8], [0x89, 0x50, 0x4e, 0x47], [...'RIFF'].map((c) => c.charCodeAt(0))];
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), fc.uint8Array({ maxLength: 200 }), (prefix, tail) => {
        const result = imageDimensions(bytesOf(prefix, tail));
        expect(result === undefined || (result.width > 0 && result.height > 0)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('walks a long JPEG of many segments in linear time', () => {
    const app = bytesOf([0xff, 0xe2, 0xff, 0xff], new Array(65533).fill(0xff));
    const parts: Uint8Array[] = [bytesOf([0xff, 0xd8])];
    for (let index = 0; index < 300; index++) parts.push(app);
    parts.push(baselineJpeg(5, 6).subarray(2));
    expect(imageDimensions(bytesOf(...parts))).toEqual({ width: 5, height: 6 });
  });
});
