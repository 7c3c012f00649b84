import { describe, expect, it } from 'vitest';
import { imageDimensions } from './image-dimensions';
import { defaultAspectRatio } from './resolve-image-request';

const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes));
const png = (width: number, height: number) =>
  b64([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, width >> 8, width & 255, 0, 0, height >> 8, height & 255, 8, 2, 0, 0, 0]);
const jpeg = (width: number, height: number) =>
  b64([0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3, 0, 0, 0, 0]);
const webpX = (width: number, height: number) =>
  b64([...'RIFF'].map((c) => c.charCodeAt(0)).concat([0, 0, 0, 0], [...'WEBPVP8X'].map((c) => c.charCodeAt(0)), [10, 0, 0, 0, 0, 0, 0, 0],
    [(width - 1) & 255, ((width - 1) >> 8) & 255, 0, (height - 1) & 255, ((height - 1) >> 8) & 255, 0]));

describe('imageDimensions', () => {
  it('reads PNG, JPEG and WebP headers', () => {
    expect(imageDimensions(png(1920, 1080))).toEqual({ width: 1920, height: 1080 });
    expect(imageDimensions(jpeg(600, 800))).toEqual({ width: 600, height: 800 });
    expect(imageDimensions(webpX(300, 200))).toEqual({ width: 300, height: 200 });
    expect(imageDimensions('not base64!')).toBeUndefined();
    expect(imageDimensions(b64([1, 2, 3, 4]))).toBeUndefined();
  });

  it('picks the nearest listed ratio', () => {
    expect(defaultAspectRatio(`data:image/png;base64,${png(1920, 1080)}`)).toBe('16:9');
    expect(defaultAspectRatio(`data:image/jpeg;base64,${jpeg(600, 800)}`)).toBe('3:4');
    expect(defaultAspectRatio(`data:image/webp;base64,${webpX(300, 200)}`)).toBe('3:2');
    expect(defaultAspectRatio(`data:image/png;base64,AAAA`)).toBe('1:1');
    expect(defaultAspectRatio(undefined)).toBe('1:1');
  });
});
