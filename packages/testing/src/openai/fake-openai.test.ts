import OpenAI from 'openai';
import { createSseDecoder, type SseEvent } from '@tollgate/sse';
import { describe, expect, it } from 'vitest';
import { fakeOpenAI } from './fake-openai';

const URL_CHAT = 'http://fake/v1/chat/completions';
const messages = [{ role: 'user', content: 'Say hello to the nice people' }];

function post(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

async function events(response: Response): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  const reader = response.body!.pipeThrough(createSseDecoder()).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) out.push(read.value);
  return out;
}

describe('fakeOpenAI: replies', () => {
  it('answers a non-streamed completion with usage counted in words', async () => {
    const upstream = fakeOpenAI({ reply: 'Hello there, nice people!', now: () => 1_700_000_000_000 });
    const response = await upstream.fetch(URL_CHAT, post({ model: 'gpt-4o-mini', messages }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = await response.json();
    expect(body.id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(body).toMatchObject({
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, nice people!', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 },
    });
    expect(upstream.open).toBe(0);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.body.messages).toEqual(messages);
    expect(upstream.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('streams: role delta, one delta per word, finish chunk, usage chunk, [DONE]', async () => {
    const upstream = fakeOpenAI({ reply: 'One two three' });
    const response = await upstream.fetch(URL_CHAT, post({ model: 'm', messages, stream: true, stream_options: { include_usage: true } }));
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const list = await events(response);
    expect(list.at(-1)).toEqual({ data: '[DONE]' });
    const chunks = list.slice(0, -1).map((event) => JSON.parse(event.data));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta ?? null)).toEqual([
      { role: 'assistant', content: '', refusal: null },
      { content: 'One' },
      { content: ' two' },
      { content: ' three' },
      {},
      null,
    ]);
    expect(chunks.map((chunk) => (chunk.choices[0] ? chunk.choices[0].finish_reason : 'none'))).toEqual([null, null, null, null, 'stop', 'none']);
    expect(chunks.map((chunk) => chunk.usage)).toEqual([
      null,
      null,
      null,
      null,
      null,
      expect.objectContaining({ prompt_tokens: 6, completion_tokens: 3, total_tokens: 9 }),
    ]);
    expect(chunks.at(-1).choices).toEqual([]);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.id).toBe(chunks[0].id);
      expect(chunk.obfuscation).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
    }
    expect(upstream.open).toBe(0);
  });

  it('streams without usage fields when include_usage is not set', async () => {
    const upstream = fakeOpenAI({ reply: 'Hi' });
    const list = await events(await upstream.fetch(URL_CHAT, post({ model: 'm', messages, stream: true })));
    const chunks = list.slice(0, -1).map((event) => JSON.parse(event.data));
    expect(chunks).toHaveLength(3);
    for (const chunk of chunks) expect('usage' in chunk).toBe(false);
  });

  it('stops at the output limit with finish_reason length', async () => {
    const upstream = fakeOpenAI({ reply: 'a b c d e' });
    const body = await (await upstream.fetch(URL_CHAT, post({ model: 'm', messages, max_completion_tokens: 2 }))).json();
    expect(body.choices[0].message.content).toBe('a b');
    expect(body.choices[0].finish_reason).toBe('length');
    expect(body.usage.completion_tokens).toBe(2);
  });

  it('returns tool calls when the request offers tools, whole and streamed', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const upstream = fakeOpenAI({ toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' }] });
    const whole = await (await upstream.fetch(URL_CHAT, post({ model: 'm', messages, tools }))).json();
    expect(whole.choices[0].finish_reason).toBe('tool_calls');
    expect(whole.choices[0].message.content).toBeNull();
    expect(whole.choices[0].message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' } },
    ]);
    expect(whole.usage.completion_tokens).toBe(4);

    const list = await events(await upstream.fetch(URL_CHAT, post({ model: 'm', messages, tools, stream: true })));
    const chunks = list.slice(0, -1).map((event) => JSON.parse(event.data));
    expect(chunks[0].choices[0].delta.tool_calls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    const args = chunks
      .slice(1, -1)
      .map((chunk) => chunk.choices[0].delta.tool_calls[0].function.arguments)
      .join('');
    expect(args).toBe('{"city":"Paris","unit":"c"}');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');

    const plain = await (await upstream.fetch(URL_CHAT, post({ model: 'm', messages }))).json();
    expect(plain.choices[0].message.tool_calls).toBeUndefined();
  });

  it('lists models', async () => {
    const upstream = fakeOpenAI({ models: ['a'] });
    expect(await (await upstream.fetch('http://fake/v1/models')).json()).toEqual({
      object: 'list',
      data: [{ id: 'a', object: 'model', created: 1686935002, owned_by: 'openai' }],
    });
    const missing = await upstream.fetch(URL_CHAT, post({ model: 'b', messages }));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('model_not_found');
  });

  it('is read by the official openai SDK, whole and streamed', async () => {
    const upstream = fakeOpenAI({ reply: 'Hello SDK world', apiKey: 'sk-test' });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://fake/v1', fetch: upstream.fetch, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]!.message.content).toBe('Hello SDK world');
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello SDK world');
    expect(usage).toMatchObject({ prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 });
    expect(upstream.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(upstream.open).toBe(0);
  });
});

describe('fakeOpenAI: errors', () => {
  it("answers 401 invalid_api_key for another key, with OpenAI's body", async () => {
    const upstream = fakeOpenAI({ apiKey: 'sk-right' });
    const response = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }, { authorization: 'Bearer sk-wrong' }));
    expect(response.status).toBe(401);
    const body = await response.json();
    expect(Object.keys(body.error)).toEqual(['message', 'type', 'param', 'code']);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: null, code: 'invalid_api_key' });
  });

  it('answers 400 context_length_exceeded over the context', async () => {
    const upstream = fakeOpenAI({ contextTokens: 3 });
    const response = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: 'context_length_exceeded', param: 'messages', type: 'invalid_request_error' });
  });

  it('answers status faults before the first byte: 429 with retry-after, content filter, 500, 503', async () => {
    const upstream = fakeOpenAI({
      faults: [
        { kind: 'status', status: 429, retryAfter: 7 },
        { kind: 'status', status: 400, code: 'content_filter' },
        { kind: 'status', status: 500 },
        { kind: 'status', status: 503 },
        { kind: 'status', status: 503, message: 'The server is overloaded or not ready yet.' },
      ],
    });
    const limited = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    expect((await limited.json()).error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    const filtered = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect([filtered.status, (await filtered.json()).error.code]).toEqual([400, 'content_filter']);
    const failed = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect([failed.status, (await failed.json()).error]).toEqual([
      500,
      { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
    ]);
    const busy = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect([busy.status, (await busy.json()).error.message]).toEqual([503, 'The service is temporarily unavailable. Please try again later.']);
    const overloaded = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect([overloaded.status, (await overloaded.json()).error.message]).toEqual([503, 'The server is overloaded or not ready yet.']);
    const healthy = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect(healthy.status).toBe(200);
    await healthy.text();
  });

  it('refuses the connection like undici', async () => {
    const upstream = fakeOpenAI({ faults: () => ({ kind: 'refuse' }) });
    const error = await upstream.fetch(URL_CHAT, post({ model: 'm', messages })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as { code: string }).code).toBe('ECONNREFUSED');
    expect(upstream.requests).toHaveLength(0);
  });

  it('answers 400 to a body that is not JSON and 404 to an unknown path', async () => {
    const upstream = fakeOpenAI();
    const bad = await upstream.fetch(URL_CHAT, { method: 'POST', body: '{nope' });
    expect([bad.status, (await bad.json()).error.type]).toEqual([400, 'invalid_request_error']);
    const unknown = await upstream.fetch('http://fake/v1/nothing', { method: 'POST', body: '{}' });
    expect([unknown.status, (await unknown.json()).error.message]).toEqual([404, 'Invalid URL (POST /v1/nothing)']);
  });
});

describe('fakeOpenAI: stream faults', () => {
  const streamed = post({ model: 'm', messages, stream: true, stream_options: { include_usage: true } });

  it('cut: the body errors after N events, without [DONE]', async () => {
    const upstream = fakeOpenAI({ reply: 'a b c d', faults: [{ kind: 'cut', afterChunks: 2 }] });
    const response = await upstream.fetch(URL_CHAT, streamed);
    const reader = response.body!.pipeThrough(createSseDecoder()).getReader();
    expect(JSON.parse((await reader.read()).value!.data).choices[0].delta.role).toBe('assistant');
    expect(JSON.parse((await reader.read()).value!.data).choices[0].delta.content).toBe('a');
    const error = await reader.read().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('terminated');
    expect(upstream.open).toBe(0);
  });

  it('truncate: the body ends cleanly after N events, without [DONE]', async () => {
    const upstream = fakeOpenAI({ reply: 'a b c d', faults: [{ kind: 'truncate', afterChunks: 3 }] });
    const list = await events(await upstream.fetch(URL_CHAT, streamed));
    expect(list).toHaveLength(3);
    expect(list.some((event) => event.data === '[DONE]')).toBe(false);
    expect(upstream.open).toBe(0);
  });

  it('stall: nothing after N events; cancelling the body closes it (open back to 0)', async () => {
    const upstream = fakeOpenAI({ reply: 'a b c d', faults: [{ kind: 'stall', afterChunks: 1 }] });
    const response = await upstream.fetch(URL_CHAT, streamed);
    const reader = response.body!.getReader();
    await reader.read();
    expect(upstream.open).toBe(1);
    const next = reader.read();
    const raced = await Promise.race([next.then(() => 'read'), new Promise((resolve) => setTimeout(resolve, 20, 'stalled'))]);
    expect(raced).toBe('stalled');
    await reader.cancel();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(upstream.open).toBe(0);
  });

  it('aborting the request signal errors the body and closes it', async () => {
    const upstream = fakeOpenAI({ faults: [{ kind: 'stall', afterChunks: 1 }] });
    const controller = new AbortController();
    const response = await upstream.fetch(URL_CHAT, { ...streamed, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const error = await reader.read().catch((e: unknown) => e);
    expect((error as DOMException).name).toBe('AbortError');
    expect(upstream.open).toBe(0);
  });

  it('drip: waits before every event through the injected sleep', async () => {
    const waits: number[] = [];
    const upstream = fakeOpenAI({ reply: 'a b', faults: [{ kind: 'drip', delayMs: 40 }], sleep: async (ms) => void waits.push(ms) });
    const list = await events(await upstream.fetch(URL_CHAT, streamed));
    expect(list).toHaveLength(6);
    expect(waits).toEqual([40, 40, 40, 40, 40, 40]);
  });

  it('malformed: event N is not JSON', async () => {
    const upstream = fakeOpenAI({ reply: 'a b', faults: [{ kind: 'malformed', afterChunks: 1 }] });
    const list = await events(await upstream.fetch(URL_CHAT, streamed));
    expect(() => JSON.parse(list[1]!.data)).toThrow(SyntaxError);
    expect(list.at(-1)!.data).toBe('[DONE]');
  });

  it("error-event: OpenAI's error record as an event, then the end", async () => {
    const upstream = fakeOpenAI({ reply: 'a b', faults: [{ kind: 'error-event', afterChunks: 2, status: 500 }] });
    const list = await events(await upstream.fetch(URL_CHAT, streamed));
    expect(list).toHaveLength(3);
    expect(JSON.parse(list[2]!.data)).toEqual({
      error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
    });
  });

  it('cancel of a non-streamed body closes it too', async () => {
    const upstream = fakeOpenAI();
    const response = await upstream.fetch(URL_CHAT, post({ model: 'm', messages }));
    expect(upstream.open).toBe(1);
    await response.body!.cancel();
    expect(upstream.open).toBe(0);
  });

  it('routes image generations to the images fake, behind the same key and faults', async () => {
    const upstream = fakeOpenAI({ apiKey: 'k', faults: [{ kind: 'status', status: 503 }] });
    const request = () =>
      upstream.fetch(
        'http://fake/v1/images/generations',
        post({ model: 'gpt-image-1', prompt: 'a cat', n: 1, size: '1024x1024' }, { authorization: 'Bearer k' }),
      );
    expect((await request()).status).toBe(503);
    const response = await request();
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.data).toHaveLength(1);
    expect(body.data[0].b64_json.startsWith('iVBORw0KGgo')).toBe(true);
    expect(upstream.requests[1]!.body).toEqual({ model: 'gpt-image-1', prompt: 'a cat', n: 1, size: '1024x1024' });
    const refused = await upstream.fetch('http://fake/v1/images/generations', post({ model: 'gpt-image-1', prompt: 'x' }, { authorization: 'Bearer nope' }));
    expect(refused.status).toBe(401);
  });
});
