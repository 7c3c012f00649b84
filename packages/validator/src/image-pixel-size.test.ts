import { describe, expect, it } from 'vitest';
import { imagePixelSize } from './image-pixel-size';
import { ASPECT_RATIOS, nearestAspectRatio } from './nearest-aspect-ratio';

describe('imagePixelSize', () => {
  it('gives the documented table at 1k and 2k', () => {
    const table = Object.fromEntries(
      ASPECT_RATIOS.map((ratio) => {
        const small = imagePixelSize(ratio, '1k');
        const large = imagePixelSize(ratio, '2k');
        return [ratio, `${small.width}x${small.height} ${large.width}x${large.height}`];
      }),
    );
    expect(table).toEqual({
      '1:1': '1024x1024 2048x2048',
      '16:9': '1024x576 2048x1152',
      '9:16': '576x1024 1152x2048',
      '4:3': '1024x768 2048x1536',
      '3:4': '768x1024 1536x2048',
      '3:2': '1024x680 2048x1368',
      '2:3': '680x1024 1368x2048',
    });
  });

  it('gives sides that are multiples of 8 and map back to their ratio', () => {
    for (const ratio of ASPECT_RATIOS) {
      for (const resolution of ['1k', '2k'] as const) {
        const { width, height } = imagePixelSize(ratio, resolution);
        expect(width % 8).toBe(0);
        expect(height % 8).toBe(0);
        expect(nearestAspectRatio(width, height)).toBe(ratio);
      }
    }
  });

  it('takes other W:H ratios and keeps the short side at least 8', () => {
    expect(imagePixelSize('21:9', '1k')).toEqual({ width: 1024, height: 440 });
    expect(imagePixelSize('1000:1', '1k')).toEqual({ width: 1024, height: 8 });
  });

  it('throws a RangeError for a malformed ratio or resolution', () => {
    expect(() => imagePixelSize('wide', '1k')).toThrow(RangeError);
    expect(() => imagePixelSize('0:1', '1k')).toThrow(RangeError);
    expect(() => imagePixelSize('1:1', '4k' as '1k')).toThrow(RangeError);
  });
});
