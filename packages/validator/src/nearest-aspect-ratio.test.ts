import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ASPECT_RATIOS, isAspectRatio, nearestAspectRatio } from './nearest-aspect-ratio';

describe('nearestAspectRatio', () => {
  it('maps each listed ratio to itself', () => {
    for (const ratio of ASPECT_RATIOS) {
      const [width, height] = ratio.split(':').map(Number) as [number, number];
      expect(nearestAspectRatio(width * 100, height * 100)).toBe(ratio);
    }
  });

  it('maps common photo and screen sizes', () => {
    expect(nearestAspectRatio(1920, 1080)).toBe('16:9');
    expect(nearestAspectRatio(4032, 3024)).toBe('4:3');
    expect(nearestAspectRatio(3024, 4032)).toBe('3:4');
    expect(nearestAspectRatio(6000, 4000)).toBe('3:2');
    expect(nearestAspectRatio(1080, 1350)).toBe('3:4'); // 4:5 portrait: log distance 0.065 to 3:4, 0.223 to 1:1
    expect(nearestAspectRatio(2560, 1080)).toBe('16:9'); // ultrawide: beyond the widest listed
    expect(nearestAspectRatio(1, 1000)).toBe('9:16');
  });

  it('decides by log distance, not by difference of quotients', () => {
    // 1.15 is nearer 1:1 than 4:3 as quotients (0.15 vs 0.183) and in log space (0.140 vs 0.148).
    expect(nearestAspectRatio(115, 100)).toBe('1:1');
    // 1.16: quotient distance says 1:1 (0.16 vs 0.173); log distance says 4:3 (0.148 vs 0.140).
    expect(nearestAspectRatio(116, 100)).toBe('4:3');
  });

  it('is symmetric: a portrait maps to the mirror of its landscape', () => {
    const mirror = (ratio: string) => ratio.split(':').reverse().join(':');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20000 }), fc.integer({ min: 1, max: 20000 }), (width, height) => {
        // Exclude the measure-zero ties, where the earlier ratio wins on both sides.
        fc.pre(width !== height);
        expect(nearestAspectRatio(height, width)).toBe(mirror(nearestAspectRatio(width, height)));
      }),
    );
  });

  it('gives 1:1 for sizes that are not positive and finite', () => {
    expect(nearestAspectRatio(0, 100)).toBe('1:1');
    expect(nearestAspectRatio(100, -1)).toBe('1:1');
    expect(nearestAspectRatio(Number.NaN, 1)).toBe('1:1');
    expect(nearestAspectRatio(Infinity, 1)).toBe('1:1');
  });

  it('recognises the listed ratios only', () => {
    expect(isAspectRatio('3:2')).toBe(true);
    expect(isAspectRatio('21:9')).toBe(false);
    expect(isAspectRatio(1)).toBe(false);
  });
});
