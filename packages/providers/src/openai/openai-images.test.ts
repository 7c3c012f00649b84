import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { openaiCompatible } from './openai-compatible';
import { openaiImageSize, readOpenAIImages } from './openai-images';

const b64 = (bytes: number[]) => btoa(String.fromCharCode(...bytes, 0, 0, 0, 0, 0, 0, 0, 0));
const PNG = b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const JPEG = b64([0xff, 0xd8, 0xff, 0xe0]);
const GIF = b64([...'GIF89a'].map((c) => c.charCodeAt(0)));
const WEBP = b64(
  [...'RIFF']
    .map((c) => c.charCodeAt(0))
    .concat(
      [1, 2, 3, 4],
      [...'WEBP'].map((c) => c.charCodeAt(0)),
    ),
);

describe('openaiImageSize', () => {
  it('asks an OpenAI-compatible server for the canonical pixel size of the ratio', () => {
    expect(['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3'].map((ratio) => openaiImageSize(ratio, '1k'))).toEqual([
      '1024x1024',
      '1024x576',
      '576x1024',
      '1024x768',
      '768x1024',
      '1024x680',
      '680x1024',
    ]);
    expect(['1:1', '16:9', '2:3'].map((ratio) => openaiImageSize(ratio, '2k', 'flux-dev'))).toEqual(['2048x2048', '2048x1152', '1368x2048']);
  });

  it("maps the ratio to an orientation for OpenAI's fixed-size models", () => {
    expect(['1:1', '16:9', '3:4'].map((ratio) => openaiImageSize(ratio, '1k', 'gpt-image-1'))).toEqual(['1024x1024', '1536x1024', '1024x1536']);
    expect(['1:1', '3:2', '9:16'].map((ratio) => openaiImageSize(ratio, '1k', 'dall-e-3'))).toEqual(['1024x1024', '1792x1024', '1024x1792']);
  });
});

describe('readOpenAIImages', () => {
  it('sniffs PNG, JPEG, GIF and WebP from the bytes, ignoring any declared type', () => {
    const images = readOpenAIImages({ data: [PNG, JPEG, GIF, WEBP].map((b64_json) => ({ b64_json, mime_type: 'text/html' })) });
    expect(images.map((image) => image.mime_type)).toEqual(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
  });

  it('leaves out an image whose bytes are no known image type; a reply with none left is upstream_error', () => {
    for (const b64_json of [b64([1, 2, 3]), '!!', '']) {
      expect(readOpenAIImages({ data: [{ b64_json: PNG }, { b64_json }] })).toEqual([{ b64_json: PNG, mime_type: 'image/png' }]);
      const error = (() => {
        try {
          readOpenAIImages({ data: [{ b64_json }] });
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(ProviderError);
      expect([(error as ProviderError).code, (error as ProviderError).accepted]).toEqual(['upstream_error', true]);
    }
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
    const images = await provider.images!(
      { prompt: 'a cat', n: 2, aspect_ratio: '16:9', resolution: '1k', quality: 'high', reference_images: [] },
      { upstream: 'gpt-image-1' },
    );
    expect(images).toEqual([
      { b64_json: PNG, mime_type: 'image/png' },
      { b64_json: JPEG, mime_type: 'image/jpeg' },
    ]);
    expect(sent).toEqual([
      {
        url: 'http://fake/v1/images/generations',
        body: { model: 'gpt-image-1', prompt: 'a cat', n: 2, size: '1536x1024', quality: 'high' },
      },
    ]);
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
    // gpt-image-* answer base64 and refuse response_format; other models are asked for it.
    expect(upstream.requests[0]!.body).toEqual({ model: 'gpt-image-1', prompt: 'a cat', size: '1024x1024', n: 2 });
    await provider.images!({ prompt: 'a cat', n: 1, aspect_ratio: '1:1', resolution: '1k', reference_images: [] }, { upstream: 'dall-e-3' });
    expect(upstream.requests[1]!.body).toMatchObject({ model: 'dall-e-3', response_format: 'b64_json' });
  });

  it('gets a PNG of the asked ratio from a compatible server, and refuses bytes that are not an image', async () => {
    const { fakeImagesHandler } = await import('@tollgate/testing');
    const provider = (fail?: 'not_an_image') =>
      openaiCompatible({
        baseURL: 'http://fake/v1',
        fetch: (async (input: RequestInfo | URL, init?: RequestInit) =>
          fakeImagesHandler(new Request(input, init), fail ? { fail } : {})) as typeof globalThis.fetch,
      });
    const request = { prompt: 'a cat', n: 1, aspect_ratio: '16:9', resolution: '1k', reference_images: [] };
    const [image] = await provider().images!(request, { upstream: 'flux-dev' });
    const ihdr = new DataView(Uint8Array.from(atob(image!.b64_json.slice(0, 32)), (char) => char.charCodeAt(0)).buffer);
    expect([image!.mime_type, ihdr.getUint32(16), ihdr.getUint32(20)]).toEqual(['image/png', 1024, 576]);
    const refused = await provider('not_an_image').images!(request, { upstream: 'flux-dev' }).catch((e: unknown) => e);
    expect([(refused as ProviderError).code, (refused as ProviderError).accepted]).toEqual(['upstream_error', true]);
  });
});
