/**
 * Issue 3 end to end through `gateway.fetch`: every 400, 408 and 413 row of the spec's Errors
 * table, the precedence between them, and what of a valid request reaches the upstream.
 */
import { ERROR_CATALOGUE as ERRORS, type ErrorCode, type Timers } from '@tollgate/core';
import { describe, expect, it, vi } from 'vitest';
import { chatBody, setup, testModels, type TestGateway } from '../test/test-harness';

const VERSION = 'tollgate/test';
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A chat model that reads text only, so part types and remote media can be told apart. */
const TEXT_ONLY = {
  id: 'texty',
  type: 'chat' as const,
  provider: 'local',
  upstream: 'gpt-4o-mini',
  max_output_tokens: 1_000,
  price: { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 2_000_000, min_hold_micros: 50 },
};

async function gatewayWithTextModel(): Promise<TestGateway> {
  return setup({ models: [...testModels(), TEXT_ONLY] });
}

interface ErrorBody {
  error: { message: string; type: string; param: null; code: string };
}

/**
 * Asserts a refusal before anything started: the status and envelope of the catalogue, no request
 * id, no funding, the service version; nothing reached the upstream and nothing stays held.
 */
async function expectRefused(t: TestGateway, response: Response, code: ErrorCode, message?: RegExp): Promise<ErrorBody> {
  const body = (await response.json()) as ErrorBody;
  expect({ status: response.status, code: body.error.code }).toEqual({ status: ERRORS[code].status, code });
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.type).toBe(ERRORS[code].type);
  expect(body.error.param).toBeNull();
  expect(typeof body.error.message).toBe('string');
  if (message) expect(body.error.message).toMatch(message);
  expect(response.headers.get('x-request-id')).toBeNull();
  expect(response.headers.get('x-funding')).toBeNull();
  expect(response.headers.get('x-service-version')).toBe(VERSION);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(t.fake.requests).toHaveLength(0);
  expect(await t.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
  return body;
}

const chat = (t: TestGateway, body: unknown) => t.post('/v1/chat/completions', body);
const image = (t: TestGateway, body: Record<string, unknown>) => t.post('/v1/images/generations', { model: 'painter', prompt: 'A lighthouse', ...body });

function messages(count: number): { role: string; content: string }[] {
  return Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: 'x' }));
}

describe('invalid_request_body', () => {
  it.each([
    ['not JSON', '{"model": "fast", "messages": [}'],
    ['empty', ''],
    ['an array', '[{"model":"fast"}]'],
    ['a string', '"hello"'],
    ['null', 'null'],
    ['a number', '42'],
    ['two documents', '{"model":"fast","messages":[{"role":"user","content":"a"}]} {}'],
  ])('refuses a body that is not a JSON object: %s', async (_, text) => {
    const t = await setup();
    await expectRefused(t, await chat(t, text), 'invalid_request_body');
  });

  it('reads any Content-Type as JSON', async () => {
    const t = await setup();
    const response = await t.post('/v1/chat/completions', JSON.stringify(chatBody()), { 'content-type': 'text/plain' });
    expect(response.status).toBe(200);
  });

  it.each([
    ['model a number', { model: 5 }, /model/],
    ['messages a string', { messages: 'hi' }, /messages/],
    ['stream a string', { stream: 'yes' }, /stream/],
    ['content a number', { messages: [{ role: 'user', content: 5 }] }, /messages\[0\]\.content/],
    ['a message not an object', { messages: ['hi'] }, /messages\[0\]/],
    ['role a number', { messages: [{ role: 1, content: 'a' }] }, /messages\[0\]\.role/],
    ['max_tokens a string', { max_tokens: '10' }, /max_tokens/],
    ['tools an object', { tools: { type: 'function' } }, /tools/],
    ['stream_options.include_usage a string', { stream: true, stream_options: { include_usage: 'yes' } }, /include_usage/],
    ['a text part without text', { messages: [{ role: 'user', content: [{ type: 'text' }] }] }, /messages\[0\]\.content\[0\]\.text/],
  ])('refuses a chat field of the wrong JSON type: %s', async (_, extra, message) => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody(extra)), 'invalid_request_body', message);
  });

  it('refuses a chat body without model, with an empty model, or without messages', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, { messages: [{ role: 'user', content: 'a' }] }), 'invalid_request_body', /model is required/);
    await expectRefused(t, await chat(t, chatBody({ model: '' })), 'invalid_request_body', /model/);
    await expectRefused(t, await chat(t, { model: 'fast' }), 'invalid_request_body', /messages is required/);
  });

  it('refuses an image body without model or with a prompt of the wrong type', async () => {
    const t = await setup();
    await expectRefused(t, await t.post('/v1/images/generations', { prompt: 'A cat' }), 'invalid_request_body', /model is required/);
    await expectRefused(t, await image(t, { prompt: 5 }), 'invalid_request_body', /prompt/);
    await expectRefused(t, await image(t, { n: '2' }), 'invalid_request_body', /\bn\b/);
    await expectRefused(t, await t.post('/v1/images/generations', '[]'), 'invalid_request_body');
  });

  it('refuses a body that is not UTF-8', async () => {
    const t = await setup();
    const bytes = new TextEncoder().encode('{"model":"fast","messages":[{"role":"user","content":"\u00e9"}]}');
    const bad = bytes.map((byte) => (byte === 0xc3 ? 0xff : byte));
    const response = await t.gateway.fetch(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}` },
        body: bad,
      }),
    );
    await expectRefused(t, response, 'invalid_request_body');
  });
});

describe('invalid_parameter', () => {
  it.each([
    ['reasoning_effort', { reasoning_effort: 'extreme' }, /^reasoning_effort must be one of none, minimal, low, medium, high, xhigh/],
    ['a role', { messages: [{ role: 'robot', content: 'a' }] }, /^messages\[0\]\.role must be one of system, developer, user, assistant, tool/],
    ['tool_choice', { tool_choice: 'sometimes' }, /^tool_choice must be one of auto, none, required/],
    ['tool_choice.type', { tool_choice: { type: 'web', function: { name: 'f' } } }, /^tool_choice\.type/],
    [
      'image detail',
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG, detail: 'ultra' } }] }] },
      /^messages\[0\]\.content\[0\]\.image_url\.detail/,
    ],
  ])('refuses a chat value the endpoint does not take, naming the field: %s', async (_, extra, message) => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody(extra)), 'invalid_parameter', message);
  });

  it.each([
    ['size (unlisted)', { size: '1024x1024' }, /^size is not a field of this endpoint/],
    ['style (unlisted)', { style: 'vivid' }, /^style is not a field/],
    ['user (unlisted)', { user: 'u-1' }, /^user is not a field/],
    ['n too large', { n: 5 }, /^n must be an integer from 1 to 4/],
    ['n zero', { n: 0 }, /^n must be an integer from 1 to 4/],
    ['n fractional', { n: 1.5 }, /^n must be an integer from 1 to 4/],
    ['aspect_ratio', { aspect_ratio: '5:4' }, /^aspect_ratio must be one of 1:1, 16:9/],
    ['resolution not listed', { resolution: '4k' }, /^resolution/],
    ['quality not of the model', { quality: 'medium' }, /^quality must be one of low, high for the model painter/],
    ['response_format url', { response_format: 'url' }, /^response_format/],
    ['too many reference images', { reference_images: [PNG, PNG, PNG] }, /^reference_images holds 3 images; the model painter takes at most 2/],
    ['a reference image that is not an image', { reference_images: ['data:text/plain;base64,aGk='] }, /^reference_images\[0\]/],
  ])('refuses an image value the endpoint does not take, naming the field: %s', async (_, extra, message) => {
    const t = await setup();
    await expectRefused(t, await image(t, extra), 'invalid_parameter', message);
  });
});

describe('duplicate_json_key', () => {
  it('refuses a key repeated at any depth, even where the field would be dropped', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, '{"model":"fast","model":"fast","messages":[{"role":"user","content":"a"}]}'), 'duplicate_json_key');
    await expectRefused(t, await chat(t, '{"model":"fast","messages":[{"role":"user","content":"a","content":"b"}]}'), 'duplicate_json_key');
    const deep = '{"model":"fast","messages":[{"role":"user","content":"a"}],"metadata":{"a":[{"b":{"c":1,"c":2}}]}}';
    await expectRefused(t, await chat(t, deep), 'duplicate_json_key');
    await expectRefused(t, await t.post('/v1/images/generations', '{"model":"painter","prompt":"a","n":1,"n":2}'), 'duplicate_json_key');
  });

  it('takes the same key in sibling objects', async () => {
    const t = await setup();
    const response = await chat(
      t,
      '{"model":"fast","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}',
    );
    expect(response.status).toBe(200);
  });
});

describe('too_many_messages', () => {
  it('refuses 4,097 messages and takes 4,096', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody({ messages: messages(4_097) })), 'too_many_messages', /messages/);
    const ok = await chat(t, chatBody({ messages: messages(4_096) }));
    expect(ok.status).toBe(200);
  });
});

describe('request_too_complex', () => {
  it('refuses more than 262,144 values, also in a field that would be dropped', async () => {
    const t = await setup();
    // The body object, "fast", the messages array, the message, "user", "a" and the x array are 7 values.
    const filler = (count: number) => `{"model":"fast","messages":[{"role":"user","content":"a"}],"x":[${new Array(count).fill('0').join(',')}]}`;
    await expectRefused(t, await chat(t, filler(262_144 - 7 + 1)), 'request_too_complex');
    const ok = await chat(t, filler(262_144 - 7));
    expect(ok.status).toBe(200);
  });

  it('answers a 100,000-level nesting with a clean 400, in a field and at the top', async () => {
    const t = await setup();
    const depth = 100_000;
    const nested = `{"model":"fast","messages":[{"role":"user","content":"a"}],"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    await expectRefused(t, await chat(t, nested), 'request_too_complex');
    await expectRefused(t, await chat(t, `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`), 'request_too_complex');
    // Unclosed nesting is still too complex (found before the end), never a stack overflow.
    await expectRefused(t, await chat(t, `{"x":${'['.repeat(depth)}`), 'request_too_complex');
    // A top-level array is not an object, however deep it goes.
    await expectRefused(t, await chat(t, '['.repeat(depth)), 'invalid_request_body');
  });

  it('takes nesting up to the documented 1,000 levels and refuses one more', async () => {
    const t = await setup();
    // The body object is level 1; x holds levels 2 to depth + 1.
    const body = (depth: number) => `{"model":"fast","messages":[{"role":"user","content":"a"}],"x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    await expectRefused(t, await chat(t, body(1_000)), 'request_too_complex');
    expect((await chat(t, body(999))).status).toBe(200);
  });
});

describe('invalid_output_limit', () => {
  it.each([
    [{ max_tokens: 0 }],
    [{ max_tokens: -5 }],
    [{ max_tokens: 1.5 }],
    [{ max_completion_tokens: 0 }],
    [{ max_completion_tokens: 2.25, max_tokens: 10 }],
    [{ max_completion_tokens: 10, max_tokens: -1 }],
  ])('refuses %j', async (extra) => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody(extra)), 'invalid_output_limit', /max_(completion_)?tokens must be a positive integer/);
  });
});

describe('invalid_request', () => {
  it.each([
    ['a tool of another type', { tools: [{ type: 'web_search' }] }, /tools\[0\]/],
    [
      'a file part with another member',
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,AA==', file_id: 'f-1' } }] }] },
      /file may carry only file_data and filename, not file_id/,
    ],
    [
      'a part type the model does not read',
      { messages: [{ role: 'user', content: [{ type: 'video_url', video_url: { url: 'data:video/mp4;base64,AA==' } }] }] },
      /messages\[0\]\.content\[0\] is a video_url part, which the model fast does not read/,
    ],
    [
      'a malformed tool call',
      {
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', function: { name: 'f' } }] },
        ],
      },
      /messages\[1\]\.tool_calls\[0\]/,
    ],
  ])('refuses %s', async (_, extra, message) => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody(extra)), 'invalid_request', message);
  });

  it('refuses an image part for a model that reads text only', async () => {
    const t = await gatewayWithTextModel();
    const body = chatBody({ model: 'texty', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: PNG } }] }] });
    await expectRefused(t, await chat(t, body), 'invalid_request', /image_url part, which the model texty does not read/);
  });
});

describe('remote_media', () => {
  const linked = (url: string) =>
    chatBody({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });

  it('refuses an https image URL, and takes a data: URL', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, linked('https://example.com/cat.png')), 'remote_media', /messages\[0\]\.content\[1\]\.image_url/);
    expect((await chat(t, linked(PNG))).status).toBe(200);
  });

  it('wins over invalid_request for a model that does not read images', async () => {
    const t = await gatewayWithTextModel();
    await expectRefused(t, await chat(t, { ...linked('https://example.com/cat.png'), model: 'texty' }), 'remote_media');
  });

  it('covers video, audio and file URLs and image reference URLs', async () => {
    const t = await setup();
    for (const type of ['video_url', 'audio_url', 'file_url']) {
      const body = chatBody({ messages: [{ role: 'user', content: [{ type, [type]: { url: 'http://example.com/x' } }] }] });
      await expectRefused(t, await chat(t, body), 'remote_media', new RegExp(type));
    }
    await expectRefused(t, await image(t, { reference_images: ['https://example.com/ref.png'] }), 'remote_media', /reference_images\[0\]/);
  });
});

describe('errors from the upstream, after the request started', () => {
  async function expectStartedError(t: TestGateway, response: Response, code: ErrorCode) {
    const body = (await response.json()) as ErrorBody;
    expect({ status: response.status, code: body.error.code, type: body.error.type, param: body.error.param }).toEqual({
      status: 400,
      code,
      type: 'invalid_request_error',
      param: null,
    });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(response.headers.get('x-service-version')).toBe(VERSION);
    expect(JSON.stringify(body)).not.toContain('OpenAI');
    expect(t.fake.requests).toHaveLength(1);
    // The hold is released: nothing paid, nothing held.
    expect(await t.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
  }

  it('context_length_exceeded: the upstream says the conversation is too long', async () => {
    const t = await setup({ fakeOptions: { contextTokens: 3 } });
    await expectStartedError(t, await chat(t, chatBody({ messages: [{ role: 'user', content: 'one two three four five' }] })), 'context_length_exceeded');
  });

  it('context_length_exceeded on a streamed request (before the first event)', async () => {
    const t = await setup({ fakeOptions: { faults: [{ kind: 'status', status: 400, code: 'context_length_exceeded' }] } });
    const response = await chat(t, chatBody({ stream: true }));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    await expectStartedError(t, response, 'context_length_exceeded');
  });

  it('content_filter: the provider declined the prompt', async () => {
    const t = await setup({ fakeOptions: { faults: [{ kind: 'status', status: 400, code: 'content_filter' }] } });
    await expectStartedError(t, await chat(t, chatBody()), 'content_filter');
  });

  it('content_filter from a content policy refusal', async () => {
    const t = await setup({ fakeOptions: { faults: [{ kind: 'status', status: 400, code: 'content_policy_violation' }] } });
    await expectStartedError(t, await chat(t, chatBody()), 'content_filter');
  });
});

/** Timers the test fires by hand. */
function manualTimers() {
  const pending = new Set<{ fn: () => void; ms: number }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      const handle = { fn, ms };
      pending.add(handle);
      return handle;
    },
    clearTimeout: (handle) => void pending.delete(handle as { fn: () => void; ms: number }),
  };
  return { timers, pending };
}

/** A body stream that sends `first` and then nothing, until cancelled. */
function stalledBody(first: string) {
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(first));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

function streamedRequest(t: TestGateway, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Request {
  return new Request('http://gateway.test/v1/chat/completions', {
    method: 'POST',
    headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json', ...headers },
    body,
    duplex: 'half',
  } as RequestInit);
}

describe('request_timeout', () => {
  it('answers 408 when the body is not complete one minute after the request began, and stops reading', async () => {
    const { timers, pending } = manualTimers();
    const t = await setup({ timers });
    const { stream, state } = stalledBody('{"model":"fast","messages":[');
    const reply = t.gateway.fetch(streamedRequest(t, stream));
    // The body deadline is scheduled on the injected timers, a minute from the request's start.
    const deadline = await vi.waitFor(
      () => {
        const found = [...pending].find((timer) => timer.ms === 60_000);
        if (!found) throw new Error('no body deadline scheduled');
        return found;
      },
      { timeout: 5_000, interval: 2 },
    );
    t.clock.advance(60_000);
    deadline.fn();
    await expectRefused(t, await reply, 'request_timeout');
    expect(state.cancelled).toBe(true);
    expect(pending.size).toBe(0);
    expect(t.gateway.active).toBe(0);
  });

  it('takes a body that completes before the deadline, and cancels the deadline', async () => {
    const { timers, pending } = manualTimers();
    const t = await setup({ timers });
    const text = JSON.stringify(chatBody());
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, 10)));
        controller.enqueue(new TextEncoder().encode(text.slice(10)));
        controller.close();
      },
    });
    const response = await t.gateway.fetch(streamedRequest(t, stream));
    expect(response.status).toBe(200);
    expect(pending.size).toBe(0);
  });

  it('answers 408 for a body that ended after the deadline even if the timer had not run yet', async () => {
    const { timers } = manualTimers();
    const t = await setup({ timers });
    const text = JSON.stringify(chatBody());
    let step = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (step++ === 0) {
            controller.enqueue(new TextEncoder().encode(text));
            t.clock.advance(60_001); // the client took over a minute; the timer never fired
          } else controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    await expectRefused(t, await t.gateway.fetch(streamedRequest(t, stream)), 'request_timeout');
  });
});

describe('request_too_large', () => {
  it('refuses a Content-Length over 32 MiB without reading the body', async () => {
    const t = await setup();
    let pulls = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulls++;
          controller.enqueue(new Uint8Array(1024));
        },
      },
      { highWaterMark: 0 },
    );
    const response = await t.gateway.fetch(streamedRequest(t, stream, { 'content-length': String(32 * 1024 * 1024 + 1) }));
    await expectRefused(t, response, 'request_too_large');
    expect(pulls).toBe(0);
  });

  it('refuses a chunked body once it passes 32 MiB while reading, and stops reading', async () => {
    const t = await setup();
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let pulls = 0;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulls++;
          controller.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    await expectRefused(t, await t.gateway.fetch(streamedRequest(t, stream)), 'request_too_large');
    expect(pulls).toBe(33);
    expect(cancelled).toBe(true);
  });

  it('takes exactly 32 MiB (mostly padding) with the right Content-Length', async () => {
    const t = await setup();
    const head = JSON.stringify(chatBody());
    const bytes = new Uint8Array(32 * 1024 * 1024).fill(0x20);
    bytes.set(new TextEncoder().encode(head));
    const response = await t.gateway.fetch(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}` },
        body: bytes,
      }),
    );
    expect(response.status).toBe(200);
  });
});

describe('precedence', () => {
  it('a wrong JSON type beats too many messages', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody({ messages: messages(4_097), stream: 'yes' })), 'invalid_request_body', /stream/);
    const inside = messages(4_097);
    inside[4_000] = { role: 'user', content: 7 as unknown as string };
    await expectRefused(t, await chat(t, chatBody({ messages: inside })), 'invalid_request_body', /messages\[4000\]\.content/);
  });

  it('a missing model beats every value problem', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, { messages: messages(4_097), max_tokens: 0, reasoning_effort: 'x' }), 'invalid_request_body', /model is required/);
  });

  it('too many messages beats an output limit and a bad value', async () => {
    const t = await setup();
    const body = chatBody({ messages: [...messages(4_096), { role: 'robot', content: 'a' }], max_tokens: 0, reasoning_effort: 'x' });
    await expectRefused(t, await chat(t, body), 'too_many_messages');
  });

  it('an output limit beats a bad value', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody({ max_completion_tokens: -1, reasoning_effort: 'x' })), 'invalid_output_limit');
  });

  it('a bad value beats remote media, which beats invalid_request', async () => {
    const t = await setup();
    const remote = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] };
    await expectRefused(t, await chat(t, chatBody({ messages: [remote], reasoning_effort: 'x' })), 'invalid_parameter', /reasoning_effort/);
    await expectRefused(t, await chat(t, chatBody({ messages: [remote], tools: [{ type: 'web_search' }] })), 'remote_media');
  });

  it('a parse problem beats everything in the fields: duplicate key over wrong type', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, '{"model":5,"messages":[],"messages":"x"}'), 'duplicate_json_key');
  });

  it('validation runs before the model lookup: an unknown model with a bad value is invalid_parameter', async () => {
    const t = await setup();
    await expectRefused(t, await chat(t, chatBody({ model: 'nope', reasoning_effort: 'x' })), 'invalid_parameter');
    await expectRefused(t, await chat(t, chatBody({ model: 'nope' })), 'model_not_found');
  });
});

describe('what reaches the upstream', () => {
  async function upstreamBody(extra: Record<string, unknown>, options = {}): Promise<Record<string, unknown>> {
    const t = await setup(options);
    const response = await chat(t, chatBody(extra));
    expect(response.status).toBe(200);
    expect(t.fake.requests).toHaveLength(1);
    return t.fake.requests[0]!.body as Record<string, unknown>;
  }

  it('drops unlisted chat fields silently', async () => {
    const sent = await upstreamBody({
      temperature: 0.2,
      top_p: 0.9,
      n: 3,
      stop: ['x'],
      seed: 7,
      response_format: { type: 'json_object' },
      logprobs: true,
      user: 'someone',
      metadata: { a: 'b' },
      store: true,
      frequency_penalty: 1,
      logit_bias: { 1: 2 },
      service_tier: 'flex',
    });
    expect(sent).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }], stream: false, max_completion_tokens: 500 });
  });

  it('keeps the listed fields', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} } } }];
    const sent = await upstreamBody({ reasoning_effort: 'low', tools, tool_choice: 'auto', parallel_tool_calls: false });
    expect(sent.reasoning_effort).toBe('low');
    expect(sent.tools).toEqual(tools);
    expect(sent.tool_choice).toBe('auto');
    expect(sent.parallel_tool_calls).toBe(false);
  });

  it("keeps only each role's fields and drops name", async () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    const sent = await upstreamBody({
      messages: [
        { role: 'system', content: 'Be brief', name: 'sys', tool_calls: [call], tool_call_id: 'x' },
        { role: 'developer', content: 'Dev', name: 'dev' },
        { role: 'user', content: [{ type: 'text', text: 'Hi', extra: 1 }], name: 'alice', tool_call_id: 'y' },
        { role: 'assistant', content: null, name: 'bot', tool_calls: [call], tool_call_id: 'z', refusal: null },
        { role: 'tool', content: 'result', name: 'lookup', tool_call_id: 'call_1', tool_calls: [call] },
        { role: 'user', content: 'And?' },
      ],
    });
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Be brief' },
      { role: 'developer', content: 'Dev' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: 'result', tool_call_id: 'call_1' },
      { role: 'user', content: 'And?' },
    ]);
  });

  it.each([
    ['max_completion_tokens wins over max_tokens', { max_completion_tokens: 100, max_tokens: 200 }, 100],
    ['max_tokens alone', { max_tokens: 300 }, 300],
    ['clamped to max_output_tokens', { max_completion_tokens: 5_000 }, 1_000],
    ['max_tokens clamped too', { max_tokens: 1_001 }, 1_000],
    ['the model default when neither is set', {}, 500],
    ['null means unset', { max_completion_tokens: null, max_tokens: null }, 500],
    ['null max_completion_tokens lets max_tokens apply', { max_completion_tokens: null, max_tokens: 40 }, 40],
  ])('output limit: %s', async (_, extra, expected) => {
    const sent = await upstreamBody(extra);
    expect(sent.max_completion_tokens).toBe(expected);
    expect(sent.max_tokens).toBeUndefined();
  });
});
