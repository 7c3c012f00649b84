import { describe, expect, it } from 'vitest';
import { base64Of, baselineJpeg, gifHeader, pngHeader, webpLossy } from '../test/image-headers.fixture';
import { parseImageDataUrl } from './parse-image-data-url';

const png = pngHeader(64, 32);
const notAnImage = { ok: false, error: { code: 'invalid_parameter', message: 'Not a base64 data URL of a PNG, JPEG or WebP image.' } };

describe('parseImageDataUrl', () => {
  it('parses PNG, JPEG and WebP data URLs into their bytes', () => {
    expect(parseImageDataUrl(`data:image/png;base64,${base64Of(png)}`)).toEqual({ ok: true, value: { mime: 'image/png', bytes: png } });
    const jpeg = baselineJpeg(3, 4);
    expect(parseImageDataUrl(`data:image/jpeg;base64,${base64Of(jpeg)}`)).toEqual({ ok: true, value: { mime: 'image/jpeg', bytes: jpeg } });
    const webp = webpLossy(3, 4);
    expect(parseImageDataUrl(`data:image/webp;base64,${base64Of(webp)}`)).toEqual({ ok: true, value: { mime: 'image/webp', bytes: webp } });
  });

  it('takes case-insensitive headers, parameters, image/jpg and unpadded base64', () => {
    const jpeg = baselineJpeg(3, 4);
    expect(parseImageDataUrl(`DATA:Image/JPG;base64,${base64Of(jpeg)}`)).toMatchObject({ ok: true, value: { mime: 'image/jpeg' } });
    expect(parseImageDataUrl(`data:image/png;name=a.png;BASE64,${base64Of(png)}`)).toMatchObject({ ok: true, value: { mime: 'image/png' } });
    expect(parseImageDataUrl(`data:image/png;base64,${base64Of(png).replace(/=+$/, '')}`)).toMatchObject({ ok: true });
  });

  it('refuses a declared type the bytes contradict', () => {
    expect(parseImageDataUrl(`data:image/jpeg;base64,${base64Of(png)}`)).toEqual(notAnImage);
    expect(parseImageDataUrl(`data:image/webp;base64,${base64Of(baselineJpeg(1, 1))}`)).toEqual(notAnImage);
  });

  it('refuses GIF and other types, even when the bytes match', () => {
    expect(parseImageDataUrl(`data:image/gif;base64,${base64Of(gifHeader(1, 1))}`)).toEqual(notAnImage);
    expect(parseImageDataUrl(`data:image/svg+xml;base64,${base64Of(png)}`)).toEqual(notAnImage);
    expect(parseImageDataUrl(`data:;base64,${base64Of(png)}`)).toEqual(notAnImage);
  });

  it('refuses links, non-base64 data URLs and broken base64', () => {
    expect(parseImageDataUrl('https://example.com/a.png')).toEqual(notAnImage);
    expect(parseImageDataUrl(`data:image/png,${base64Of(png)}`)).toEqual(notAnImage);
    expect(parseImageDataUrl('data:image/png;base64')).toEqual(notAnImage);
    expect(parseImageDataUrl(`data:image/png;base64,${base64Of(png)}#`)).toEqual(notAnImage);
    expect(parseImageDataUrl('data:image/png;base64,')).toEqual(notAnImage);
    expect(parseImageDataUrl(42 as unknown as string)).toEqual(notAnImage);
  });
});
