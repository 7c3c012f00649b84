import { describe, expect, it } from 'vitest';
import { base64Of, baselineJpeg, bytesOf, gifHeader, pngHeader, webpExtended, webpLossless, webpLossy } from '../test/image-headers.fixture';
import { sniffBase64ImageType, sniffImageType } from './sniff-image-type';

describe('sniffImageType', () => {
  it('recognises PNG, JPEG, WebP (every chunk kind) and GIF', () => {
    expect(sniffImageType(pngHeader(1, 1))).toBe('image/png');
    expect(sniffImageType(baselineJpeg(1, 1))).toBe('image/jpeg');
    expect(sniffImageType(webpLossy(1, 1))).toBe('image/webp');
    expect(sniffImageType(webpLossless(1, 1))).toBe('image/webp');
    expect(sniffImageType(webpExtended(1, 1))).toBe('image/webp');
    expect(sniffImageType(gifHeader(1, 1))).toBe('image/gif');
    expect(sniffImageType(bytesOf('GIF87a'))).toBe('image/gif');
  });

  it('gives undefined for other or too-short bytes', () => {
    expect(sniffImageType(new Uint8Array(0))).toBeUndefined();
    expect(sniffImageType(bytesOf([0x89, 0x50, 0x4e, 0x47]))).toBeUndefined();
    expect(sniffImageType(bytesOf('RIFF', [0, 0, 0, 0], 'WAVE'))).toBeUndefined();
    expect(sniffImageType(bytesOf('GIF88a'))).toBeUndefined();
    expect(sniffImageType(bytesOf('%PDF-1.7'))).toBeUndefined();
    expect(sniffImageType(bytesOf([0xff, 0xd8]))).toBeUndefined();
  });
});

describe('sniffBase64ImageType', () => {
  it('sniffs from the first characters of base64', () => {
    expect(sniffBase64ImageType(base64Of(pngHeader(5, 5)))).toBe('image/png');
    expect(sniffBase64ImageType(base64Of(baselineJpeg(5, 5)))).toBe('image/jpeg');
    expect(sniffBase64ImageType(base64Of(webpLossless(5, 5)))).toBe('image/webp');
    expect(sniffBase64ImageType(base64Of(gifHeader(5, 5)))).toBe('image/gif');
    expect(sniffBase64ImageType(`\n ${base64Of(pngHeader(5, 5))}`)).toBe('image/png');
  });

  it('reads only the head: a broken tail does not matter', () => {
    expect(sniffBase64ImageType(`${base64Of(pngHeader(5, 5))}!!!not base64`)).toBe('image/png');
  });

  it('gives undefined for short, foreign or invalid text', () => {
    expect(sniffBase64ImageType('')).toBeUndefined();
    expect(sniffBase64ImageType('/9j')).toBeUndefined();
    expect(sniffBase64ImageType('/9j/')).toBe('image/jpeg');
    expect(sniffBase64ImageType('SGVsbG8gd29ybGQh')).toBeUndefined();
    expect(sniffBase64ImageType('iVBO!w0KGgoAAAAN')).toBeUndefined();
  });
});
