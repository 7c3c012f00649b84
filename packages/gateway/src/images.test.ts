/**
 * Issue 8 end to end through `gateway.fetch`: the image request's rules, the reply, and its
 * billing (hold n, pay delivered images at max(1 credit, per image + references x per reference),
 * nothing when the client leaves), upstream failures, and a Gemini image route.
 */
import { ERROR_CATALOGUE as ERRORS, type ErrorCode, type ModelConfig } from '@tollgate/core';
import { gemini, openaiCompatible } from '@tollgate/providers';
import { fakeGemini, fakeImagesHandler, type FakeImagesOptions } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { setup, testModels, UPSTREAM_KEY, type SetupOptions, type TestGateway } from '../test/test-harness';

const START = 10_000_000;
const PAINTER = 40_000;

/** Extra image models: an exact-size upstream, a cheap one taking no references, a plus-only one, a Gemini one. */
const MODELS: ModelConfig[] = [
  ...testModels(),
  {
    id: 'canvas',
    type: 'image',
    provider: 'local',
    upstream: 'flux-dev',
    price: { micros_per_image: 30_000, micros_per_reference: 0 },
    max_reference_images: 1,
    resolutions: ['1k', '2k'],
  },
  { id: 'sketch', type: 'image', provider: 'local', upstream: 'sketch-1', price: { micros_per_image: 2_000, micros_per_reference: 1_000 } },
  { id: 'muralist', type: 'image', provider: 'local', upstream: 'gpt-image-1', plan: 'plus', price: { micros_per_image: 80_000, micros_per_reference: 0 } },
  {
    id: 'nano',
    type: 'image',
    provider: 'gem',
    upstream: 'gemini-2.5-flash-image',
    price: { micros_per_image: 39_000, micros_per_reference: 1_000 },
    max_reference_images: 3,
    resolutions: ['1k', '2k'],
  },
];

const bytes = (...parts: (number[] | string)[]) => parts.flatMap((part) => (typeof part === 'string' ? [...part].map((char) => char.charCodeAt(0)) : part));
const be32 = (value: number) => [value >>> 24, (value >> 16) & 255, (value >> 8) & 255, value & 255];
const base64 = (values: number[]) => btoa(String.fromCharCode(...values));
/** A PNG signature and IHDR: all the validator reads. */
const pngHeader = (width: number, height: number) =>
  base64(bytes([0x89], 'PNG\r\n\x1a\n', be32(13), 'IHDR', be32(width), be32(height), [8, 2, 0, 0, 0], [0, 0, 0, 0]));
/** A JPEG start and SOF0 frame header. */
const jpegHeader = (width: number, height: number) =>
  base64(bytes([0xff, 0xd8, 0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3], new Array(9).fill(0), [0xff, 0xd9]));
/** A lossless WebP header (VP8L). */
const webpHeader = (width: number, height: number) => {
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14);
  return base64(bytes('RIFF', [17, 0, 0, 0], 'WEBPVP8L', [5, 0, 0, 0, 0x2f], [bits & 255, (bits >> 8) & 255, (bits >> 16) & 255, bits >>> 24], [0]));
};
const PNG_16_9 = `data:image/png;base64,${pngHeader(1920, 1080)}`;
const JPEG_3_4 = `data:image/jpeg;base64,${jpegHeader(3024, 4032)}`;
const WEBP_2_3 = `data:image/webp;base64,${webpHeader(1000, 1500)}`;
const GIF = `data:image/gif;base64,${base64(bytes('GIF89a', [1, 0, 1, 0, 0, 0, 0]))}`;

interface ImageReply {
  created: number;
  data: { b64_json: string; mime_type: string }[];
}

interface ImagesGateway extends TestGateway {
  /** The Gemini fake behind the `nano` model. */
  gemini: ReturnType<typeof fakeGemini>;
}

/**
 * A gateway whose `local` provider talks to the harness's fakeOpenAI (or to `local` when given)
 * and whose `gem` provider talks to a Gemini fake.
 */
async function open(options: SetupOptions & { local?: typeof fetch } = {}): Promise<ImagesGateway> {
  let t: TestGateway | undefined;
  const upstream: typeof fetch = options.local ?? ((input, init) => t!.fake.fetch(input, init));
  const local = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: upstream });
  const geminiFake = fakeGemini({ apiKey: 'gem-key' });
  const gem = gemini({ baseURL: 'http://gemini.test/v1beta', apiKey: 'gem-key', fetch: geminiFake.fetch });
  t = await setup({ models: MODELS, providers: { local, gem }, ...options });
  return Object.assign(t, { gemini: geminiFake });
}

/**
 * An OpenAI-compatible images upstream (the images fake) that holds every request until
 * `release()`, or until the request's signal aborts: slowness without real waiting.
 */
function heldImages(options: FakeImagesOptions = {}) {
  const bodies: Record<string, unknown>[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    arrive();
    await new Promise<void>((resolve, reject) => {
      if (request.signal.aborted) reject(request.signal.reason);
      request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true });
      void gate.then(resolve);
    });
    return fakeImagesHandler(request, { ...options, onRequest: (body) => bodies.push(body) });
  }) as typeof globalThis.fetch;
  return { fetch, bodies, release, arrived };
}

/** An images upstream answering a fixed OpenAI images body. */
function answering(body: unknown): typeof fetch {
  return (async () => Response.json(body)) as typeof fetch;
}

const image = (t: TestGateway, body: Record<string, unknown>, model = 'painter') =>
  t.post('/v1/images/generations', { model, prompt: 'A lighthouse at dusk', ...body });

async function expectRefused(t: TestGateway, response: Response, code: ErrorCode, message?: string | RegExp): Promise<void> {
  const body = (await response.json()) as { error: { code: string; type: string; message: string; param: null } };
  expect([response.status, body.error.code, body.error.type, body.error.param]).toEqual([ERRORS[code].status, code, ERRORS[code].type, null]);
  if (typeof message === 'string') expect(body.error.message).toBe(message);
  else if (message) expect(body.error.message).toMatch(message);
  expect(response.headers.get('x-request-id')).toBeNull();
  expect(t.fake.requests).toHaveLength(0);
}

/** The IHDR size of a base64 PNG. */
function pngSize(b64: string): [number, number] {
  const head = Uint8Array.from(atob(b64.slice(0, 32)), (char) => char.charCodeAt(0));
  const view = new DataView(head.buffer);
  return [view.getUint32(16), view.getUint32(20)];
}

describe('the request: n, aspect_ratio, resolution, quality, response_format, unlisted fields', () => {
  it('makes one image by default and up to four, each paid at the per-image price', async () => {
    const t = await open();
    const one = await image(t, {});
    expect(one.status).toBe(200);
    expect(((await one.json()) as ImageReply).data).toHaveLength(1);
    expect(t.fake.requests[0]!.body).toEqual({ model: 'gpt-image-1', prompt: 'A lighthouse at dusk', n: 1, size: '1024x1024' });
    const four = await image(t, { n: 4 });
    expect(((await four.json()) as ImageReply).data).toHaveLength(4);
    expect(await t.balance()).toEqual({ balance: START - 5 * PAINTER, held: 0, available: START - 5 * PAINTER });
  });

  it.each([0, 5, 1.5, -1])('refuses n = %s with invalid_parameter naming n', async (n) => {
    const t = await open();
    await expectRefused(t, await image(t, { n }), 'invalid_parameter', 'n must be an integer from 1 to 4.');
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
  });

  it('takes every listed aspect ratio and refuses others', async () => {
    const t = await open();
    const sizes: string[] = [];
    for (const ratio of ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3']) {
      expect((await image(t, { aspect_ratio: ratio }, 'canvas')).status).toBe(200);
      sizes.push(t.fake.requests.at(-1)!.body.size as string);
    }
    expect(sizes).toEqual(['1024x1024', '1024x576', '576x1024', '1024x768', '768x1024', '1024x680', '680x1024']);
    const fresh = await open();
    await expectRefused(fresh, await image(fresh, { aspect_ratio: '5:4' }, 'canvas'), 'invalid_parameter', /^aspect_ratio must be one of 1:1, 16:9/);
  });

  it('defaults the ratio to 1:1, or to the listed ratio nearest the first reference image', async () => {
    const t = await open();
    const cases: [string[], string][] = [
      [[], '1024x1024'],
      [[PNG_16_9], '1024x576'],
      [[JPEG_3_4], '768x1024'],
      [[WEBP_2_3], '680x1024'],
    ];
    for (const [references, size] of cases) {
      const response = await image(t, { reference_images: references }, 'canvas');
      expect(response.status).toBe(200);
      expect(t.fake.requests.at(-1)!.body.size).toBe(size);
      expect(pngSize(((await response.json()) as ImageReply).data[0]!.b64_json)).toEqual(size.split('x').map(Number));
    }
    // The client's ratio wins over the reference's.
    await image(t, { reference_images: [PNG_16_9], aspect_ratio: '9:16' }, 'canvas');
    expect(t.fake.requests.at(-1)!.body.size).toBe('576x1024');
  });

  it('refuses a first reference whose size cannot be read when no ratio is given', async () => {
    const t = await open();
    const headless = `data:image/png;base64,${base64(bytes([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 0]))}`;
    await expectRefused(
      t,
      await image(t, { reference_images: [headless] }, 'canvas'),
      'invalid_parameter',
      /^reference_images\[0\] has an image header whose size cannot be read/,
    );
    expect((await image(t, { reference_images: [headless], aspect_ratio: '4:3' }, 'canvas')).status).toBe(200);
  });

  it('takes the resolutions of the model only', async () => {
    const t = await open();
    expect((await image(t, { resolution: '2k', aspect_ratio: '16:9' }, 'canvas')).status).toBe(200);
    expect(t.fake.requests[0]!.body.size).toBe('2048x1152');
    const fresh = await open();
    await expectRefused(fresh, await image(fresh, { resolution: '2k' }, 'sketch'), 'invalid_parameter', 'resolution must be one of 1k for the model sketch.');
    await expectRefused(fresh, await image(fresh, { resolution: '4k' }, 'canvas'), 'invalid_parameter', /^resolution must be one of 1k, 2k/);
  });

  it('takes quality only for models that have it, from their list', async () => {
    const t = await open();
    expect((await image(t, { quality: 'high' })).status).toBe(200);
    expect(t.fake.requests[0]!.body.quality).toBe('high');
    const fresh = await open();
    await expectRefused(fresh, await image(fresh, { quality: 'medium' }), 'invalid_parameter', 'quality must be one of low, high for the model painter.');
    await expectRefused(fresh, await image(fresh, { quality: 'high' }, 'canvas'), 'invalid_parameter', 'quality is not a setting of the model canvas.');
  });

  it('takes response_format b64_json only', async () => {
    const t = await open();
    expect((await image(t, { response_format: 'b64_json' })).status).toBe(200);
    const fresh = await open();
    await expectRefused(fresh, await image(fresh, { response_format: 'url' }), 'invalid_parameter', 'response_format must be one of b64_json.');
  });

  it.each(['size', 'style', 'user', 'background', 'output_format'])('refuses the unlisted field %s naming it', async (field) => {
    const t = await open();
    await expectRefused(t, await image(t, { [field]: 'x' }), 'invalid_parameter', `${field} is not a field of this endpoint.`);
  });

  it('refuses a chat model id with model_not_found, and a plus model for a free account with model_requires_plan', async () => {
    const t = await open();
    await expectRefused(t, await image(t, {}, 'fast'), 'model_not_found');
    await expectRefused(t, await image(t, {}, 'muralist'), 'model_requires_plan');
    const plus = await open({ plan: 'plus' });
    expect((await image(plus, {}, 'muralist')).status).toBe(200);
    expect(await plus.balance()).toEqual({ balance: START - 80_000, held: 0, available: START - 80_000 });
  });
});

describe('reference images', () => {
  it('takes PNG, JPEG and WebP data URLs up to the model maximum, each adding to every image', async () => {
    const t = await open();
    const response = await image(t, { n: 2, reference_images: [JPEG_3_4, WEBP_2_3] });
    expect(response.status).toBe(200);
    // Per image 40,000 + 2 x 5,000 = 50,000; two images.
    expect(await t.balance()).toEqual({ balance: START - 100_000, held: 0, available: START - 100_000 });
    // painter (gpt-image-1) takes fixed sizes: the 3:4 reference picks portrait.
    expect(t.fake.requests[0]!.body.size).toBe('1024x1536');
  });

  it('refuses other types, too many, a contradicted type, and any for a model that takes none', async () => {
    const t = await open();
    const jpegAsPng = `data:image/png;base64,${jpegHeader(10, 10)}`;
    await expectRefused(
      t,
      await image(t, { reference_images: [GIF] }),
      'invalid_parameter',
      'reference_images[0] must be a base64 data URL of a PNG, JPEG or WebP image.',
    );
    await expectRefused(
      t,
      await image(t, { reference_images: [PNG_16_9, jpegAsPng] }),
      'invalid_parameter',
      'reference_images[1] must be a base64 data URL of a PNG, JPEG or WebP image.',
    );
    await expectRefused(t, await image(t, { reference_images: ['data:image/png;base64,%%%'] }), 'invalid_parameter', /^reference_images\[0\] must be/);
    await expectRefused(
      t,
      await image(t, { reference_images: [PNG_16_9, PNG_16_9, PNG_16_9] }),
      'invalid_parameter',
      'reference_images holds 3 images; the model painter takes at most 2.',
    );
    await expectRefused(
      t,
      await image(t, { reference_images: [PNG_16_9] }, 'sketch'),
      'invalid_parameter',
      'reference_images is not taken by the model sketch.',
    );
    await expectRefused(t, await image(t, { reference_images: ['https://example.com/a.png'] }), 'remote_media', /^reference_images\[0\] links a URL/);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});

describe('the reply', () => {
  it('is {created, data: [{b64_json, mime_type}]} with real PNGs and the request headers', async () => {
    const t = await open();
    const response = await image(t, { n: 2, aspect_ratio: '3:2' }, 'canvas');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toMatch(/\S/);
    expect(response.headers.get('x-funding')).toBe('credits');
    const body = (await response.json()) as ImageReply;
    expect(Object.keys(body)).toEqual(['created', 'data']);
    expect(body.created).toBe(1_800_000_000);
    expect(body.data.map((item) => Object.keys(item))).toEqual([
      ['b64_json', 'mime_type'],
      ['b64_json', 'mime_type'],
    ]);
    expect(body.data.map((item) => [item.mime_type, ...pngSize(item.b64_json)])).toEqual([
      ['image/png', 1024, 680],
      ['image/png', 1024, 680],
    ]);
    expect(body.data[0]!.b64_json).not.toBe(body.data[1]!.b64_json);
  });

  it('sniffs mime_type from the bytes, ignoring the upstream label, and does not deliver or charge bytes that are no image', async () => {
    const jpeg = jpegHeader(8, 8);
    const t = await open({ local: answering({ created: 1, data: [{ b64_json: jpeg, mime_type: 'image/png' }, { b64_json: webpHeader(8, 8) }] }) });
    const body = (await (await image(t, { n: 2 })).json()) as ImageReply;
    expect(body.data).toEqual([
      { b64_json: jpeg, mime_type: 'image/jpeg' },
      { b64_json: webpHeader(8, 8), mime_type: 'image/webp' },
    ]);
    expect((await t.balance()).balance).toBe(START - 2 * PAINTER);

    const junk = await open({ local: answering({ created: 1, data: [{ b64_json: btoa('<html>no</html>') }] }) });
    const refused = await image(junk, {});
    expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([502, 'upstream_error']);
    expect(refused.headers.get('x-request-id')).toMatch(/\S/);
    expect(await junk.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});

describe('billing', () => {
  it('holds n images while the upstream is slow, then charges what was delivered', async () => {
    const upstream = heldImages();
    const t = await open({ local: upstream.fetch });
    const pending = image(t, { n: 3 });
    await upstream.arrived;
    expect(await t.balance()).toEqual({ balance: START, held: 3 * PAINTER, available: START - 3 * PAINTER });
    upstream.release();
    expect((await pending).status).toBe(200);
    expect(await t.balance()).toEqual({ balance: START - 3 * PAINTER, held: 0, available: START - 3 * PAINTER });
  });

  it('charges only the delivered images when the upstream returns fewer than n', async () => {
    const upstream = heldImages({ fail: 'fewer_images' });
    upstream.release();
    const t = await open({ local: upstream.fetch });
    const response = await image(t, { n: 3, reference_images: [PNG_16_9] });
    expect(((await response.json()) as ImageReply).data).toHaveLength(2);
    // (40,000 + 5,000) x 2 delivered, not x 3 asked.
    expect(await t.balance()).toEqual({ balance: START - 90_000, held: 0, available: START - 90_000 });
    expect(t.logs.at(-1)).toMatchObject({ status: 200, costMicros: 90_000 });
  });

  it('charges at least one credit per image on a model priced below it', async () => {
    const t = await open();
    expect((await image(t, { n: 2 }, 'sketch')).status).toBe(200);
    expect(await t.balance()).toEqual({ balance: START - 20_000, held: 0, available: START - 20_000 });
  });

  it('charges nothing when the client leaves while the upstream works', async () => {
    const upstream = heldImages();
    const t = await open({ local: upstream.fetch });
    const controller = new AbortController();
    const pending = t.gateway.fetch(
      new Request('http://gateway.test/v1/images/generations', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.key}` },
        body: JSON.stringify({ model: 'painter', prompt: 'A lighthouse', n: 2 }),
        signal: controller.signal,
      }),
    );
    await upstream.arrived;
    expect(await t.balance()).toEqual({ balance: START, held: 2 * PAINTER, available: START - 2 * PAINTER });
    controller.abort();
    await pending;
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
    expect(t.logs.at(-1)).toMatchObject({ outcome: 'client_gone', costMicros: 0 });
  });

  it('charges nothing when the client leaves just as the images come back', async () => {
    const controller = new AbortController();
    const upstream = heldImages();
    upstream.release();
    const leaving: typeof fetch = async (input, init) => {
      const response = await upstream.fetch(input, init);
      controller.abort();
      return response;
    };
    const t = await open({ local: leaving });
    await t.gateway.fetch(
      new Request('http://gateway.test/v1/images/generations', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.key}` },
        body: JSON.stringify({ model: 'painter', prompt: 'A lighthouse' }),
        signal: controller.signal,
      }),
    );
    expect(upstream.bodies).toHaveLength(1);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
    expect(t.logs.at(-1)).toMatchObject({ outcome: 'client_gone', costMicros: 0 });
  });

  it('refuses with 402 when the hold for n images does not fit', async () => {
    const t = await open({ credits: 100_000 });
    await expectRefused(t, await image(t, { n: 3 }), 'insufficient_balance');
    expect(await t.balance()).toEqual({ balance: 100_000, held: 0, available: 100_000 });
    expect((await image(t, { n: 2 })).status).toBe(200);
    expect(await t.balance()).toEqual({ balance: 20_000, held: 0, available: 20_000 });
  });

  it('refuses with 402 while the balance is negative, even on a model priced below a credit', async () => {
    // A chat settled above its hold overdraws the account by one micro-dollar.
    const t = await open({ credits: 10 });
    const hold = await t.store.hold(t.accountId, { micros: 10, minimum: 10, ttlMs: 60_000, requestId: 'req_overdraw' });
    await t.store.settle((hold as { value: { holdId: string } }).value.holdId, { micros: 11, requestId: 'req_overdraw', meta: {} });
    await expectRefused(t, await image(t, {}, 'sketch'), 'insufficient_balance');
    await expectRefused(t, await image(t, {}), 'insufficient_balance');
    expect(await t.balance()).toEqual({ balance: -1, held: 0, available: -1 });
  });
});

describe('upstream failures release the hold', () => {
  it.each([
    [{ kind: 'status' as const, status: 429, retryAfter: 7 }, 503, 'upstream_busy', '7'],
    [{ kind: 'status' as const, status: 500 }, 502, 'upstream_error', null],
    [
      { kind: 'status' as const, status: 400, code: 'content_policy_violation', message: 'Your request was rejected by the safety system.' },
      400,
      'content_filter',
      null,
    ],
  ])('%j -> %i %s', async (fault, status, code, retryAfter) => {
    const t = await open({ fakeOptions: { faults: [fault] } });
    const response = await image(t, { n: 2 });
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect([response.status, body.error.code, response.headers.get('retry-after')]).toEqual([status, code, retryAfter]);
    expect(body.error.message).not.toMatch(/safety system/);
    expect(response.headers.get('x-request-id')).toMatch(/\S/);
    expect(t.fake.requests).toHaveLength(1);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});

describe('a Gemini image route', () => {
  it('asks Gemini once per image with the ratio, size and references, and charges the delivered images', async () => {
    const t = await open();
    const response = await image(t, { n: 2, resolution: '2k', reference_images: [JPEG_3_4] }, 'nano');
    expect(response.status).toBe(200);
    const body = (await response.json()) as ImageReply;
    expect(body.data.map((item) => [item.mime_type, ...pngSize(item.b64_json)])).toEqual([
      ['image/png', 1536, 2048],
      ['image/png', 1536, 2048],
    ]);
    expect(t.gemini.requests).toHaveLength(2);
    const sent = t.gemini.requests[0]!;
    expect(sent.url).toBe('http://gemini.test/v1beta/models/gemini-2.5-flash-image:generateContent');
    expect(sent.body.generationConfig).toEqual({ responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:4', imageSize: '2K' } });
    expect(sent.body.contents[0].parts).toEqual([{ inlineData: { mimeType: 'image/jpeg', data: jpegHeader(3024, 4032) } }, { text: 'A lighthouse at dusk' }]);
    // (39,000 + 1,000) x 2.
    expect(await t.balance()).toEqual({ balance: START - 80_000, held: 0, available: START - 80_000 });
    expect(t.fake.requests).toHaveLength(0);
  });

  it('maps a blocked prompt to content_filter and charges nothing', async () => {
    const t = await open();
    t.gemini.setFaults([{ kind: 'status', status: 200, code: 'content_filter' }]);
    const response = await image(t, {}, 'nano');
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([400, 'content_filter']);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
  });
});
