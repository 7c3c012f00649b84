import type { ChatCompletionChunk } from '@tollgate/core';
import { fakeGemini, geminiFixtures } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError, type ProviderChatRequest, type ProviderImageRequest } from '../provider';
import { gemini } from './gemini';

const hello: ProviderChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Hello there' }], stream: false, max_completion_tokens: 100 };
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function setup(options: Parameters<typeof fakeGemini>[0] = {}) {
  const fake = fakeGemini({ apiKey: 'AIza-test', sleep: async () => {}, ...options });
  const provider = gemini({ baseURL: 'http://fake/v1beta/', apiKey: 'AIza-test', fetch: fake.fetch });
  return { fake, provider };
}

async function drain(stream: ReadableStream<ChatCompletionChunk>) {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) chunks.push(chunk);
  return chunks;
}

describe('gemini', () => {
  it('POSTs generateContent and streamGenerateContent?alt=sse with x-goog-api-key', async () => {
    const { fake, provider } = setup();
    await provider.chat!(hello, { upstream: 'gemini-2.5-flash' });
    await drain(await provider.chatStream!({ ...hello, stream: true }, { upstream: 'models/gemini-2.5-flash' }));
    expect(fake.requests.map((request) => request.url)).toEqual([
      'http://fake/v1beta/models/gemini-2.5-flash:generateContent',
      'http://fake/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    ]);
    expect(fake.requests[0]!.headers['x-goog-api-key']).toBe('AIza-test');
    expect(fake.requests[0]!.url).not.toContain('key=');
  });

  it('describes itself for the gateway', () => {
    expect(gemini({ zeroDataRetention: true })).toMatchObject({ kind: 'gemini', zeroDataRetention: true });
    expect(typeof gemini().images).toBe('function');
  });

  it('throws content_filter for a blocked prompt and for a safety stop with nothing said', async () => {
    for (const options of [{ blockReason: 'SAFETY' }, { finishReason: 'PROHIBITED_CONTENT', reply: '' }]) {
      const { provider } = setup(options);
      const error = await provider.chat!(hello, { upstream: 'gemini-2.5-flash' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ code: 'content_filter', accepted: true });
    }
  });

  it('keeps the text of a safety stop and reports finish_reason content_filter', async () => {
    const { provider } = setup({ reply: 'Partial answer', finishReason: 'SAFETY' });
    const reply = await provider.chat!(hello, { upstream: 'gemini-2.5-flash' });
    expect(reply.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'Partial answer' } });
  });

  it('a bad key is upstream_error (our configuration), not the client', async () => {
    const fake = fakeGemini({ apiKey: 'right' });
    const provider = gemini({ baseURL: 'http://fake/v1beta', apiKey: 'wrong', fetch: fake.fetch });
    const error = await provider.chat!(hello, { upstream: 'gemini-2.5-flash' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'upstream_error', status: 400 });
  });

  it('carries the 429 RetryInfo delay as retryAfter', async () => {
    const { provider } = setup({ faults: [{ kind: 'status', status: 429, retryAfter: 33 }] });
    const error = await provider.chatStream!({ ...hello, stream: true }, { upstream: 'gemini-2.5-flash' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'upstream_busy', accepted: false, retryAfter: 33 });
  });

  it('drives a Gemini 3 tool loop end to end: call, result by name, answer', async () => {
    const { fake, provider } = setup({ reply: 'It is sunny.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const first = await provider.chat!({ ...hello, tools }, { upstream: 'gemini-3-pro-preview' });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const second = await provider.chat!(
      {
        ...hello,
        tools,
        messages: [
          ...hello.messages,
          { role: 'assistant', content: first.choices[0]!.message.content, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: 'sunny' },
        ],
      },
      { upstream: 'gemini-3-pro-preview' },
    );
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'It is sunny.' } });
    expect(fake.requests[1]!.body.contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { result: 'sunny' } } });
  });

  describe('images', () => {
    const image: ProviderImageRequest = {
      prompt: 'a red fox',
      n: 2,
      aspect_ratio: '16:9',
      resolution: '2k',
      reference_images: [`data:image/png;base64,${PNG}`],
    };

    it('makes n generateContent calls with IMAGE output, the aspect ratio and 2K, references first', async () => {
      const { fake, provider } = setup();
      const images = await provider.images!(image, { upstream: 'gemini-3-pro-image-preview' });
      expect(images).toHaveLength(2);
      expect(images.every((item) => item.mime_type === 'image/png' && item.b64_json.length > 0)).toBe(true);
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[0]!.url).toBe('http://fake/v1beta/models/gemini-3-pro-image-preview:generateContent');
      expect(fake.requests[0]!.body).toEqual({
        contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }, { text: 'a red fox' }] }],
        generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '16:9', imageSize: '2K' } },
      });
    });

    it('sends a reference labelled image/jpg with the type of its bytes, image/jpeg (Gemini refuses image/jpg)', async () => {
      const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).toString('base64');
      const { fake, provider } = setup();
      await provider.images!({ ...image, n: 1, reference_images: [`data:image/jpg;base64,${jpeg}`] }, { upstream: 'gemini-2.5-flash-image' });
      expect(fake.requests[0]!.body.contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'image/jpeg', data: jpeg } });
    });

    it('returns the images delivered when some calls fail, and throws when none delivers', async () => {
      const partly = setup({ faults: [{ kind: 'status', status: 500 }] });
      expect(await partly.provider.images!({ ...image, resolution: '1k' }, { upstream: 'gemini-2.5-flash-image' })).toHaveLength(1);
      expect(partly.fake.requests[1]!.body.generationConfig.imageConfig).toEqual({ aspectRatio: '16:9' });
      const none = setup({
        faults: [
          { kind: 'status', status: 429, retryAfter: 4 },
          { kind: 'status', status: 429, retryAfter: 4 },
        ],
      });
      const error = await none.provider.images!(image, { upstream: 'gemini-2.5-flash-image' }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'upstream_busy', accepted: false, retryAfter: 4 });
    });

    it('skips draft images marked as thoughts (recorded reply)', async () => {
      const fetch = (async () => new Response(geminiFixtures.imageResponse, { headers: { 'content-type': 'application/json' } })) as typeof globalThis.fetch;
      const images = await gemini({ apiKey: 'k', fetch }).images!({ ...image, n: 1 }, { upstream: 'gemini-2.5-flash-image' });
      expect(images).toEqual([{ b64_json: PNG, mime_type: 'image/png' }]);
    });

    it('maps a blocked image prompt to content_filter', async () => {
      const { provider } = setup({ blockReason: 'IMAGE_SAFETY' });
      const error = await provider.images!({ ...image, n: 1 }, { upstream: 'gemini-2.5-flash-image' }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'content_filter' });
    });
  });
});
