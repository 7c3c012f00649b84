import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fakeImagesHandler, type FakeImagesOptions } from './fake-images-handler';
import { inflate, readPngChunks } from '../../test/png-reader.fixture';

const URL_ = 'http://fake.test/v1/images/generations';

function post(body: unknown, init: RequestInit = {}): Request {
  return new Request(URL_, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
}

function decode(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (char) => char.charCodeAt(0));
}

function ihdrSize(png: Uint8Array): [number, number] {
  const view = new DataView(png.buffer, png.byteOffset);
  return [view.getUint32(16), view.getUint32(20)];
}

async function errorOf(response: Response) {
  return { status: response.status, body: await response.json() };
}

describe('fakeImagesHandler', () => {
  it('answers n real PNGs of the requested size, each different, with gpt-image-1 fields', async () => {
    // gpt-image-1 answers base64 without being asked, and refuses response_format.
    const asked = await fakeImagesHandler(post({ model: 'gpt-image-1', prompt: 'a red fox', response_format: 'b64_json' }));
    expect([asked.status, (await asked.json()).error]).toEqual([
      400,
      { message: "Unknown parameter: 'response_format'.", type: 'invalid_request_error', param: 'response_format', code: 'unknown_parameter' },
    ]);
    const response = await fakeImagesHandler(post({ model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1024x576' }), {
      now: () => 1_700_000_000_500,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = await response.json();
    expect(body.created).toBe(1_700_000_000);
    expect(body.size).toBe('1024x576');
    expect(body.output_format).toBe('png');
    expect(body.quality).toBe('medium');
    expect(body.usage).toEqual({ input_tokens: 3, input_tokens_details: { image_tokens: 0, text_tokens: 3 }, output_tokens: 1152, total_tokens: 1155 });
    expect(body.data).toHaveLength(2);
    const pngs = body.data.map((image: { b64_json: string }) => decode(image.b64_json));
    for (const png of pngs) {
      expect(ihdrSize(png)).toEqual([1024, 576]);
      const chunks = readPngChunks(png);
      expect(chunks.every((chunk) => chunk.crcMatches)).toBe(true);
      expect((await inflate(chunks[1]?.data ?? new Uint8Array(0))).length).toBe(576 * (1 + 1024 * 3));
    }
    expect(body.data[0].b64_json).not.toBe(body.data[1].b64_json);
  });

  it('defaults to one 1024x1024 image; the same prompt draws the same image, another prompt another', async () => {
    const first = await (await fakeImagesHandler(post({ prompt: 'cat' }))).json();
    const again = await (await fakeImagesHandler(post({ prompt: 'cat', size: 'auto' }))).json();
    const other = await (await fakeImagesHandler(post({ prompt: 'dog' }))).json();
    expect(first.data).toHaveLength(1);
    expect(ihdrSize(decode(first.data[0].b64_json))).toEqual([1024, 1024]);
    expect(again.data[0].b64_json).toBe(first.data[0].b64_json);
    expect(other.data[0].b64_json).not.toBe(first.data[0].b64_json);
  });

  it('refuses an invalid size with the OpenAI 400 body naming size', async () => {
    for (const size of ['1024', '4097x1024', '0x10', '1024X1024', 512]) {
      expect(await errorOf(await fakeImagesHandler(post({ prompt: 'x', size })))).toEqual({
        status: 400,
        body: {
          error: {
            message: `Invalid value: '${size}'. Supported values are: 'auto' and 'WIDTHxHEIGHT' with sides from 1 to 4096.`,
            type: 'invalid_request_error',
            param: 'size',
            code: null,
          },
        },
      });
    }
  });

  it('draws sizes above 2048 scaled down to fit 2048x2048, ratio kept, and reports the drawn size', async () => {
    const body = await (await fakeImagesHandler(post({ prompt: 'x', size: '3072x2048' }))).json();
    expect(body.size).toBe('2048x1365');
    expect(ihdrSize(decode(body.data[0].b64_json))).toEqual([2048, 1365]);
    const square = await (await fakeImagesHandler(post({ prompt: 'x', size: '2048x2048' }))).json();
    expect(ihdrSize(decode(square.data[0].b64_json))).toEqual([2048, 2048]);
  });

  it('refuses what OpenAI refuses: missing prompt, bad n, unknown parameters, bad JSON', async () => {
    const cases: [unknown, string | null, string | null][] = [
      [{ n: 1 }, 'prompt', 'missing_required_parameter'],
      [{ prompt: '' }, 'prompt', 'empty_string'],
      [{ prompt: 'x', n: 0 }, 'n', 'integer_below_min_value'],
      [{ prompt: 'x', n: 11 }, 'n', 'integer_above_max_value'],
      [{ prompt: 'x', n: '2' }, 'n', 'invalid_type'],
      [{ prompt: 'x', aspect_ratio: '1:1' }, 'aspect_ratio', 'unknown_parameter'],
      [{ prompt: 'x', quality: 'ultra' }, 'quality', 'invalid_value'],
      [{ prompt: 'x', response_format: 'url' }, 'response_format', 'invalid_value'],
      [{ prompt: 'x', output_format: 'jpeg' }, 'output_format', 'invalid_value'],
      ['{"prompt": "x"', null, null],
      [[1], null, null],
    ];
    for (const [body, param, code] of cases) {
      const { status, body: reply } = await errorOf(await fakeImagesHandler(post(body)));
      expect({ status, type: reply.error.type, param: reply.error.param, code: reply.error.code }).toEqual({
        status: 400,
        type: 'invalid_request_error',
        param,
        code,
      });
    }
  });

  it('answers 404 for other paths and methods, 401 for a wrong key when one is set', async () => {
    expect(await errorOf(await fakeImagesHandler(new Request('http://fake.test/v1/images/edits', { method: 'POST', body: '{}' })))).toEqual({
      status: 404,
      body: { error: { message: 'Invalid URL (POST /v1/images/edits)', type: 'invalid_request_error', param: null, code: null } },
    });
    expect((await fakeImagesHandler(new Request(URL_))).status).toBe(404);
    const denied = await fakeImagesHandler(post({ prompt: 'x' }, { headers: { authorization: 'Bearer wrong' } }), { apiKey: 'sk-test' });
    expect((await errorOf(denied)).body.error.code).toBe('invalid_api_key');
    expect(denied.status).toBe(401);
  });

  it('injects faults with OpenAI status codes and bodies', async () => {
    const answer = (fail: FakeImagesOptions['fail']) => fakeImagesHandler(post({ prompt: 'x', n: 3, size: '64x64' }), { fail });
    const limited = await answer('rate_limit');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect((await limited.json()).error.code).toBe('rate_limit_exceeded');
    expect((await answer('server_error')).status).toBe(500);
    expect((await answer('overloaded')).status).toBe(503);
    const blocked = await errorOf(await answer('content_policy'));
    expect([blocked.status, blocked.body.error.type, blocked.body.error.code]).toEqual([400, 'image_generation_user_error', 'moderation_blocked']);
    expect((await (await answer('fewer_images')).json()).data).toHaveLength(2);
    const notImage = await (await answer('not_an_image')).json();
    expect(new TextDecoder().decode(decode(notImage.data[0].b64_json))).toBe('<html>not an image</html>');
    const malformed = await answer('malformed');
    expect(malformed.status).toBe(200);
    await expect(malformed.json()).rejects.toThrow(SyntaxError);
  });

  it('waits delayMs and rejects with the abort reason when the caller gives up', async () => {
    const controller = new AbortController();
    const pending = fakeImagesHandler(post({ prompt: 'x' }, { signal: controller.signal }), { delayMs: 10_000 });
    setTimeout(() => controller.abort(new Error('client gone')), 5);
    await expect(pending).rejects.toThrow('client gone');
    // A 19 ms timer armed first must fire before the reply: the same timer clock as the fake's wait,
    // whereas a wall-clock measure can see a timer fire early when this process was descheduled.
    let markerFired = false;
    setTimeout(() => (markerFired = true), 19);
    expect((await fakeImagesHandler(post({ prompt: 'x', size: '8x8' }), { delayMs: 20 })).status).toBe(200);
    expect(markerFired).toBe(true);
  });

  it('shows each valid body to onRequest', async () => {
    const seen: unknown[] = [];
    await fakeImagesHandler(post({ model: 'm', prompt: 'x', size: '8x8' }), { onRequest: (body) => seen.push(body) });
    await fakeImagesHandler(post({ prompt: 'x', size: 'big' }), { onRequest: (body) => seen.push(body) });
    expect(seen).toEqual([{ model: 'm', prompt: 'x', size: '8x8' }]);
  });

  it('works with the openai SDK images.generate', async () => {
    const client = new OpenAI({
      apiKey: 'sk-test',
      baseURL: 'http://fake.test/v1',
      maxRetries: 0,
      fetch: (input, init) => fakeImagesHandler(new Request(input, init), { apiKey: 'sk-test' }),
    });
    const result = await client.images.generate({ model: 'gpt-image-1', prompt: 'a lighthouse', n: 2, size: '1536x1024', quality: 'low' });
    expect(result.data?.map((image) => ihdrSize(decode(image.b64_json ?? '')))).toEqual([
      [1536, 1024],
      [1536, 1024],
    ]);
    expect(result.usage?.output_tokens).toBe(2 * 1536);
    expect(result.quality).toBe('low');
    const failure = await client.images.generate({ model: 'gpt-image-1', prompt: 'x', size: '5000x5000' as '1024x1024' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('size');
  });
});
