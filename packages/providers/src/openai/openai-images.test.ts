import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { openaiCompatible } from './openai-compatible';
import { openaiImageSize, sniffImageType } from './openai-images';

const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes, 0, 0, 0, 0, 0, 0, 0, 0));
const PNG = b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = b64([0xff, 0xd8, 0xff, 0xe0]);
const GIF = b64([...'GIF89a'].map((c) => c.charCodeAt(0)));
const WEBP = b64([...'RIFF'].map((c) => c.charCodeAt(0)).concat([1, 2, 3, 4], [...'WEBP'].map((c) => c.charCodeAt(0))));

describe('openaiImageSize', () => {
  it('maps the ratio to an orientation and the resolution to a size', () => {
    expect(['1:1', '16:9', '4:3', '3:2', '9:16', '3:4', '2:3'].map((ratio) => openaiImageSize(ratio, '1k'))).toEqual([
      '1024x1024', '1536x1024', '1536x1024', '1536x1024', '1024x1536', '1024x1536', '1024x1536',
    ]);
    expect(['1:1', '16:9', '9:16'].map((ratio) => openaiImageSize(ratio, '2k'))).toEqual(['2048x2048', '3072x2048', '2048x3072']);
  });
});

describe('sniffImageType', () => {
  it('knows PNG, JPEG, GIF and WebP by their magic numbers', () => {
    expect([PNG, JPEG, GIF, WEBP, b64([1, 2, 3]), '!!'].map(sniffImageType)).toEqual([
      'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/octet-stream', 'application/octet-stream',
    ]);
  });
});

describe('openaiCompatible: images', () => {
  it('posts the OpenAI request and returns the images with their types', async () => {
    const sent: { url: string; body: unknown }[] = [];
    const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      sent.push({ url: String(input), body: JSON.parse(String(init!.body)) });
      return Response.json({ created: 1, data: [{ b64_json: PNG }, { b64_json: JPEG }] });
    }) as typeof globalThis.fetch;
    const provider = openaiCompatible({ baseURL: 'http://fake/v1', apiKey: 'k', fetch });
    const images = await provider.images!({ prompt: 'a cat', n: 2, aspect_ratio: '16:9', resolution: '1k', quality: 'high', reference_images: [] }, { upstream: 'gpt-image-1' });
    expect(images).toEqual([{ b64_json: PNG, mime_type: 'image/png' }, { b64_json: JPEG, mime_type: 'image/jpeg' }]);
    expect(sent).toEqual([{ url: 'http://fake/v1/images/generations', body: { model: 'gpt-image-1', prompt: 'a cat', n: 2, size: '1536x1024', response_format: 'b64_json', quality: 'high' } }]);
  });

  it('maps refusals and replies without b64_json', async () => {
    const replies = [
      Response.json({ error: { message: 'no', type: 'invalid_request_error', param: null, code: 'content_policy_violation' } }, { status: 400 }),
      Response.json({ created: 1, data: [{ url: 'https://example.com/x.png' }] }),
    ];
    const fetch = (async () => replies.shift()!) as unknown as typeof globalThis.fetch;
    const provider = openaiCompatible({ fetch });
    const call = () => provider.images!({ prompt: 'p', n: 1, aspect_ratio: '1:1', resolution: '1k', reference_images: [] }, { upstream: 'm' });
    const refused = await call().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).code).toBe('content_filter');
    const linked = await call().catch((e: unknown) => e);
    expect([(linked as ProviderError).code, (linked as ProviderError).accepted]).toEqual(['upstream_error', true]);
  });
});

describe('openaiCompatible: images against fakeOpenAI', () => {
  it('gets real PNGs of the mapped size', async () => {
    const { fakeOpenAI } = await import('@tollgate/testing');
    const upstream = fakeOpenAI({ apiKey: 'k' });
    const provider = openaiCompatible({ baseURL: 'http://fake/v1', apiKey: 'k', fetch: upstream.fetch });
    const images = await provider.images!({ prompt: 'a cat', n: 2, aspect_ratio: '1:1', resolution: '1k', reference_images: [] }, { upstream: 'gpt-image-1' });
    expect(images.map((image) => image.mime_type)).toEqual(['image/png', 'image/png']);
    expect(upstream.requests[0]!.body).toMatchObject({ size: '1024x1024', n: 2, response_format: 'b64_json' });
  });
});
