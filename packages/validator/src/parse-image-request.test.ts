import type { ImageModelConfig } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { parseImageRequest } from './parse-image-request';
import { base64Of, baselineJpeg, bytesOf, jpegWithDnlHeight, progressiveJpegWithExif, webpLossless } from '../test/image-headers.fixture';
import { resolveImageRequest } from './resolve-image-request';

const PNG_2x1 = `data:image/png;base64,${btoa('\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x40\x00\x00\x00\x20\x08\x02\x00\x00\x00')}`;
const model: ImageModelConfig = { id: 'pix', type: 'image', max_reference_images: 2, resolutions: ['1k', '2k'], qualities: ['low', 'high'] };
const body = (extra: Record<string, unknown> = {}) => ({ model: 'pix', prompt: 'a cat', ...extra });
const codeOf = (input: Record<string, unknown>) => {
  const result = parseImageRequest(input);
  return result.ok ? 'ok' : result.error.code;
};
function resolve(input: Record<string, unknown>, config: ImageModelConfig = model) {
  const parsed = parseImageRequest(input);
  if (!parsed.ok) throw new Error(`${parsed.error.code}: ${parsed.error.message}`);
  return resolveImageRequest(parsed.value, config);
}

describe('parseImageRequest', () => {
  it('applies defaults: n 1, no references', () => {
    expect(parseImageRequest(body({ response_format: 'b64_json' }))).toEqual({
      ok: true,
      value: { model: 'pix', prompt: 'a cat', n: 1, reference_images: [] },
    });
  });

  it('refuses unlisted fields with invalid_parameter naming the field', () => {
    expect(parseImageRequest(body({ size: '1024x1024' }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'size is not a field of this endpoint.' },
    });
    expect(codeOf(body({ user: 'u' }))).toBe('invalid_parameter');
  });

  it('gives invalid_request_body for wrong types and a missing model or prompt, before invalid_parameter', () => {
    expect(parseImageRequest({ prompt: 'x' })).toEqual({ ok: false, error: { code: 'invalid_request_body', message: 'model is required.' } });
    expect(codeOf({ model: 'pix' })).toBe('invalid_request_body');
    expect(codeOf(body({ n: '2' }))).toBe('invalid_request_body');
    expect(codeOf(body({ reference_images: 'data:' }))).toBe('invalid_request_body');
    expect(codeOf(body({ n: '2', size: 'x' }))).toBe('invalid_request_body');
  });

  it('names the rule for n and the values for the enumerations', () => {
    for (const n of [0, 5, 1.5]) {
      expect(parseImageRequest(body({ n }))).toEqual({ ok: false, error: { code: 'invalid_parameter', message: 'n must be an integer from 1 to 4.' } });
    }
    expect(parseImageRequest(body({ aspect_ratio: '5:4' }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'aspect_ratio must be one of 1:1, 16:9, 9:16, 4:3, 3:4, 3:2, 2:3.' },
    });
    expect(codeOf(body({ resolution: '4k' }))).toBe('invalid_parameter');
    expect(parseImageRequest(body({ response_format: 'url' }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'response_format must be one of b64_json.' },
    });
    expect(codeOf(body({ prompt: '' }))).toBe('invalid_parameter');
  });
});

describe('resolveImageRequest', () => {
  it('applies the model defaults', () => {
    expect(resolve(body({ n: 4 }))).toEqual({ ok: true, value: { prompt: 'a cat', n: 4, aspect_ratio: '1:1', resolution: '1k', reference_images: [] } });
    expect(resolve(body({ quality: 'high', resolution: '2k', aspect_ratio: '16:9' }))).toEqual({
      ok: true,
      value: { prompt: 'a cat', n: 1, aspect_ratio: '16:9', resolution: '2k', quality: 'high', reference_images: [] },
    });
  });

  it('defaults the aspect ratio to the one nearest the first reference image', () => {
    expect(resolve(body({ reference_images: [PNG_2x1] }))).toMatchObject({ ok: true, value: { aspect_ratio: '16:9' } });
    const jpeg = `data:image/jpeg;base64,${base64Of(progressiveJpegWithExif(3024, 4032))}`;
    const webp = `data:image/webp;base64,${base64Of(webpLossless(1000, 1500))}`;
    expect(resolve(body({ reference_images: [jpeg, PNG_2x1] }))).toMatchObject({ ok: true, value: { aspect_ratio: '3:4' } });
    expect(resolve(body({ reference_images: [webp] }))).toMatchObject({ ok: true, value: { aspect_ratio: '2:3' } });
    expect(resolve(body({ reference_images: [jpeg], aspect_ratio: '1:1' }))).toMatchObject({ ok: true, value: { aspect_ratio: '1:1' } });
  });

  it('refuses an unreadable first reference header when no aspect_ratio is given', () => {
    // The bytes sniff as PNG and JPEG, but neither header holds a size.
    const pngNoIhdr = `data:image/png;base64,${base64Of(bytesOf([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 0]))}`;
    const jpegNoFrame = `data:image/jpeg;base64,${base64Of(jpegWithDnlHeight(640))}`;
    const refused = {
      ok: false,
      error: {
        code: 'invalid_parameter',
        message: 'reference_images[0] has an image header whose size cannot be read; send aspect_ratio or a readable image.',
      },
    };
    expect(resolve(body({ reference_images: [pngNoIhdr] }))).toEqual(refused);
    expect(resolve(body({ reference_images: [jpegNoFrame, PNG_2x1] }))).toEqual(refused);
    // With a ratio the header is not needed, and only the first reference sets the default.
    expect(resolve(body({ reference_images: [pngNoIhdr], aspect_ratio: '4:3' }))).toMatchObject({ ok: true, value: { aspect_ratio: '4:3' } });
    expect(resolve(body({ reference_images: [PNG_2x1, pngNoIhdr] }))).toMatchObject({ ok: true, value: { aspect_ratio: '16:9' } });
  });

  it('refuses a reference whose declared type the bytes contradict', () => {
    const jpegAsPng = `data:image/png;base64,${base64Of(baselineJpeg(10, 10))}`;
    expect(resolve(body({ reference_images: [PNG_2x1, jpegAsPng] }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'reference_images[1] must be a base64 data URL of a PNG, JPEG or WebP image.' },
    });
  });

  it('gives remote_media for a linked reference image, before the model checks', () => {
    expect(resolve(body({ reference_images: ['https://x/a.png', 'a', 'b'] }))).toEqual({
      ok: false,
      error: { code: 'remote_media', message: 'reference_images[0] links a URL; reference images must be inline data: URLs.' },
    });
  });

  it('checks references, resolution and quality against the model', () => {
    const plain: ImageModelConfig = { id: 'plain', type: 'image' };
    expect(resolve(body({ reference_images: [PNG_2x1] }), plain)).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'reference_images is not taken by the model plain.' },
    });
    expect(resolve(body({ reference_images: [PNG_2x1, PNG_2x1, PNG_2x1] }))).toMatchObject({ ok: false, error: { code: 'invalid_parameter' } });
    expect(resolve(body({ reference_images: ['data:image/gif;base64,AAAA'] }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'reference_images[0] must be a base64 data URL of a PNG, JPEG or WebP image.' },
    });
    expect(resolve(body({ reference_images: ['data:image/png;base64,A A'] }))).toMatchObject({ ok: false, error: { code: 'invalid_parameter' } });
    expect(resolve(body({ resolution: '2k' }), plain)).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'resolution must be one of 1k for the model plain.' },
    });
    expect(resolve(body({ quality: 'high' }), plain)).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'quality is not a setting of the model plain.' },
    });
    expect(resolve(body({ quality: 'medium' }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'quality must be one of low, high for the model pix.' },
    });
  });
});
