/**
 * POST /v1/responses through `gateway.fetch`: the chat translation and the native pass-through,
 * metered like chat (admission, limits, hold, settlement, early stops), with exact amounts.
 */
import type { ModelConfig } from '@tollgate/core';
import { openaiCompatible } from '@tollgate/providers';
import { fakeOpenAI, fakeOpenAIResponses } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { CHAT_PRICE, chatBody, setup, testModels, UPSTREAM_KEY } from '../test/test-harness';

/** Ten one-word tokens for the fake (48 characters). */
const TEN = 'one two three four five six seven eight nine ten';
// The test price: 1 micro a prompt token, 2 a completion token (test-harness.ts CHAT_PRICE).
const cost = (input: number, output: number) => input + 2 * output;

/** The events of a Responses SSE body, checking each `event:` line names its event. */
async function events(response: Response): Promise<Record<string, any>[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [line, data] = block.split('\n');
      const event = JSON.parse(data?.slice('data: '.length) ?? 'null');
      expect(line).toBe(`event: ${event.type}`);
      return event;
    });
}

/** The text a Responses stream's `response.output_text.delta` events carried. */
const textOf = (list: Record<string, any>[]) =>
  list
    .filter((event) => event.type === 'response.output_text.delta')
    .map((event) => event.delta)
    .join('');

describe('POST /v1/responses, chat translation', () => {
  it('answers the response object; usage from the upstream; charged as chat; started headers', async () => {
    const t = await setup({ fakeOptions: { reply: TEN, cachedTokens: 1 } });
    const before = await t.balance();
    const response = await t.post('/v1/responses', { model: 'fast', instructions: 'Be brief', input: 'Count to ten', metadata: { run: '7' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(response.headers.get('x-service-version')).toBe('tollgate/test');
    const body = await response.json();
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'fast',
      instructions: 'Be brief',
      max_output_tokens: 500,
      metadata: { run: '7' },
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: TEN }] }],
      // The fake counts words: "Be brief" + "Count to ten" = 5 prompt tokens.
      usage: { input_tokens: 5, input_tokens_details: { cached_tokens: 1 }, output_tokens: 10, total_tokens: 15 },
    });
    expect(t.fake.requests[0]?.body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Count to ten' },
      ],
      max_completion_tokens: 500,
    });
    await t.gateway.idle();
    const after = await t.balance();
    expect([before.balance - after.balance, after.held]).toEqual([cost(5, 10), 0]);
    expect(await t.inFlight()).toBe(0);
  });

  it('streams the event sequence and settles the usage of response.completed', async () => {
    const t = await setup({ fakeOptions: { reply: TEN } });
    const before = await t.balance();
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const list = await events(response);
    expect(list.map((event) => event.sequence_number)).toEqual(list.map((_, index) => index));
    expect(textOf(list)).toBe(TEN);
    expect(list.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 3, output_tokens: 10 } } });
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(3, 10));
  });

  it('a stream the upstream breaks off ends with response.failed and pays what was delivered', async () => {
    const t = await setup({ fakeOptions: { reply: TEN, faults: [{ kind: 'cut', afterChunks: 4 }] } });
    const before = await t.balance();
    const list = await events(await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true }));
    const delivered = textOf(list);
    const last = list.at(-1);
    expect(last).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'upstream_error' } } });
    // No usage came: the prompt estimate (12 ASCII bytes / 4 = 3, plus 4 for the message) and the delivered text.
    expect(last?.response.usage).toMatchObject({ input_tokens: 7, output_tokens: Math.ceil(delivered.length / 4) });
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(7, Math.ceil(delivered.length / 4)));
  });

  it('a malformed chunk is not delivered: neither its text nor its usage is paid, first or mid-stream (as chat)', async () => {
    const chunk = (delta: Record<string, unknown>, usage?: Record<string, number>) =>
      `data: ${JSON.stringify({ id: 'u', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...(usage ? { usage } : {}) })}\n\n`;
    // Text the client is never sent, beside tool_calls no client could read (and usage that came with them).
    const bad = chunk(
      { content: 'Hello world, this text is never sent to the client at all', tool_calls: [null] },
      { prompt_tokens: 7, completion_tokens: 50, total_tokens: 57 },
    );
    for (const [body, sent] of [
      [`${bad}data: [DONE]\n\n`, ''],
      [`${chunk({ role: 'assistant', content: 'one two' })}${bad}data: [DONE]\n\n`, 'one two'],
    ] as const) {
      const fetch: typeof globalThis.fetch = async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      const t = await setup({ providers: { local: openaiCompatible({ baseURL: 'http://odd.test/v1', apiKey: UPSTREAM_KEY, fetch }) }, models: testModels() });
      const before = await t.balance();
      const list = await events(await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true }));
      const delivered = textOf(list);
      expect([delivered, list.at(-1)?.type]).toEqual([sent, 'response.failed']);
      await t.gateway.idle();
      const after = await t.balance();
      // Nothing delivered: released; else the prompt estimate (7) and what was sent (7 characters: 2 tokens).
      expect([before.balance - after.balance, after.held]).toEqual([sent === '' ? 0 : cost(7, 2), 0]);
    }
  });

  it('counts toward requests in flight while it streams, like chat', async () => {
    const t = await setup({ fakeOptions: { reply: TEN } });
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count', stream: true });
    expect(await t.inFlight()).toBe(1);
    await response.text();
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
  });

  it('lowers the output limit to the balance and says so; refuses what it does not serve before holding', async () => {
    // 100 micros: prompt bound 12 bytes + 8 = 20 micros, leaving 40 completion tokens at 2 micros.
    const t = await setup({ credits: 100, fakeOptions: { reply: TEN } });
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten' });
    expect(response.headers.get('x-output-limited')).toBe('balance');
    const body = await response.json();
    expect(body.max_output_tokens).toBe(40);
    expect(t.fake.requests.at(-1)?.body.max_completion_tokens).toBe(40);

    await t.gateway.idle();
    const streamed = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true });
    expect(streamed.headers.get('x-output-limited')).toBe('balance');
    const completed = (await events(streamed)).at(-1);
    expect([completed?.type, completed?.response.max_output_tokens]).toEqual(['response.completed', t.fake.requests.at(-1)?.body.max_completion_tokens]);

    const refused = await t.post('/v1/responses', { model: 'fast', input: 'x', previous_response_id: 'resp_1' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-request-id')).toBeNull();
    expect((await refused.json()).error).toMatchObject({ code: 'invalid_parameter', message: expect.stringContaining('previous_response_id') });
  });
});

describe('POST /v1/responses, native pass-through (openaiCompatible({ responsesApi: true }))', () => {
  const native = () => {
    const upstream = fakeOpenAIResponses({ apiKey: UPSTREAM_KEY, reply: TEN, cachedTokens: 2 });
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: upstream.fetch, responsesApi: true });
    return { upstream, provider };
  };

  it('sends the checked body with the upstream model, the resolved limit and store: false; rewrites model; charges its usage', async () => {
    const { upstream, provider } = native();
    const t = await setup({ providers: { local: provider }, models: testModels() });
    const before = await t.balance();
    const response = await t.post('/v1/responses', {
      model: 'fast',
      input: 'Count to ten',
      metadata: { a: 'b' },
      temperature: 0.5,
      stream_options: { include_obfuscation: false },
    });
    const body = await response.json();
    expect(upstream.requests[0]?.body).toEqual({
      model: 'gpt-4o-mini',
      input: 'Count to ten',
      metadata: { a: 'b' },
      temperature: 0.5,
      max_output_tokens: 500,
      store: false,
      stream: false,
    });
    expect(body).toMatchObject({
      model: 'fast',
      status: 'completed',
      usage: { input_tokens: 3, output_tokens: 10, input_tokens_details: { cached_tokens: 2 } },
    });
    expect(body.output[0].content[0].text).toBe(TEN);
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(3, 10));
  });

  it("streams the upstream's own events, model rewritten, and settles its usage", async () => {
    const { upstream, provider } = native();
    const t = await setup({ providers: { local: provider }, models: testModels() });
    const before = await t.balance();
    const list = await events(await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true }));
    expect(upstream.requests[0]?.body).toEqual({ model: 'gpt-4o-mini', input: 'Count to ten', max_output_tokens: 500, store: false, stream: true });
    expect(list[0]).toMatchObject({ type: 'response.created', response: { model: 'fast' } });
    expect(list.at(-1)).toMatchObject({ type: 'response.completed', response: { model: 'fast', usage: { input_tokens: 3, output_tokens: 10 } } });
    expect(list.find((event) => event.type === 'response.output_text.delta')?.obfuscation).toEqual(expect.any(String));
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(3, 10));
  });
});

describe('POST /v1/responses, native failures', () => {
  it("an upstream error event mid-stream: response.failed on the upstream's numbering; pays the prompt estimate and the delivered text", async () => {
    const upstream = fakeOpenAIResponses({ apiKey: UPSTREAM_KEY, reply: TEN, faults: [{ kind: 'error-event', afterChunks: 6 }] });
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: upstream.fetch, responsesApi: true });
    const t = await setup({ providers: { local: provider }, models: testModels() });
    const before = await t.balance();
    const list = await events(await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true }));
    const delivered = textOf(list);
    expect(delivered.length).toBeGreaterThan(0);
    expect(list.map((event) => event.sequence_number)).toEqual(list.map((_, index) => index));
    const last = list.at(-1);
    expect(last).toMatchObject({ type: 'response.failed', response: { model: 'fast', status: 'failed', error: { code: 'upstream_error' } } });
    expect(last?.response.usage).toMatchObject({ input_tokens: 7, output_tokens: Math.ceil(delivered.length / 4) });
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(7, Math.ceil(delivered.length / 4)));
  });

  it('a whole response the upstream failed itself, with nothing delivered and no usage, passes through and costs nothing', async () => {
    const failedBody = {
      id: 'resp_up',
      object: 'response',
      model: 'gpt-4o-mini',
      status: 'failed',
      error: { code: 'server_error', message: 'x' },
      output: [],
      usage: null,
    };
    const fetch: typeof globalThis.fetch = async () => Response.json(failedBody);
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch, responsesApi: true });
    const t = await setup({ providers: { local: provider }, models: testModels() });
    const before = await t.balance();
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten' });
    expect([response.status, await response.json()]).toEqual([200, { ...failedBody, model: 'fast' }]);
    await t.gateway.idle();
    const after = await t.balance();
    expect([after.balance, after.held]).toEqual([before.balance, 0]);
  });

  it('an upstream refusal before any event is its own status, with nothing charged', async () => {
    const upstream = fakeOpenAIResponses({ apiKey: UPSTREAM_KEY, faults: [{ kind: 'status', status: 400, code: 'context_length_exceeded' }] });
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: upstream.fetch, responsesApi: true });
    const t = await setup({ providers: { local: provider }, models: testModels() });
    const before = await t.balance();
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true });
    expect([response.status, (await response.json()).error.code]).toEqual([400, 'context_length_exceeded']);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    await t.gateway.idle();
    expect(await t.balance()).toEqual(before);
  });
});

describe('POST /v1/responses, the same rules as chat', () => {
  const CHARACTER = 'You are Captain Marrow, a weary pirate who speaks only in riddles.';

  it('the characters rule: a character prompt in instructions or a system item is app-only', async () => {
    const t = await setup({ characters: [CHARACTER], fakeOptions: { reply: TEN } });
    const before = await t.balance();
    const asInstructions = await t.post('/v1/responses', { model: 'fast', instructions: `${CHARACTER} Stay in role.`, input: 'Ahoy' });
    const asItem = await t.post('/v1/responses', {
      model: 'fast',
      input: [
        { role: 'system', content: CHARACTER },
        { role: 'user', content: 'Ahoy' },
      ],
    });
    for (const refused of [asInstructions, asItem]) {
      expect(refused.status).toBe(403);
      expect(refused.headers.get('x-request-id')).toBeNull();
      expect((await refused.json()).error.code).toBe('characters_app_only');
    }
    expect(t.fake.requests).toHaveLength(0);
    expect(await t.balance()).toEqual(before);
  });

  it('shares the requests in flight with chat: two open Responses streams leave a free account no slot for a chat request', async () => {
    const t = await setup({ fakeOptions: { reply: TEN } });
    const first = await t.post('/v1/responses', { model: 'fast', input: 'Count', stream: true });
    const second = await t.post('/v1/responses', { model: 'fast', input: 'Count', stream: true });
    const chat = await t.post('/v1/chat/completions', chatBody());
    expect([chat.status, (await chat.json()).error.code, chat.headers.get('retry-after')]).toEqual([429, 'concurrency_limit_exceeded', '1']);
    await Promise.all([first.text(), second.text()]);
    await t.gateway.idle();
    expect(await t.inFlight()).toBe(0);
    expect((await t.post('/v1/responses', { model: 'fast', input: 'Count' })).status).toBe(200);
  });

  it('another method is the plain-text 405, as on every route', async () => {
    const t = await setup();
    const response = await t.get('/v1/responses');
    expect([response.status, await response.text(), response.headers.get('x-service-version')]).toEqual([405, 'Method Not Allowed', 'tollgate/test']);
  });

  it('is served under basePath, and only there', async () => {
    const t = await setup({ basePath: '/api', fakeOptions: { reply: TEN } });
    expect((await t.post('/api/v1/responses', { model: 'fast', input: 'Count' })).status).toBe(200);
    const outside = await t.post('/v1/responses', { model: 'fast', input: 'Count' });
    expect([outside.status, await outside.text()]).toEqual([404, 'Not Found']);
  });

  it('a client that leaves mid-stream pays the prompt estimate and the text it was sent', async () => {
    const t = await setup({ fakeOptions: { reply: TEN } });
    const before = await t.balance();
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true });
    const reader = response.body?.getReader();
    if (!reader) throw new Error('no body');
    const decoder = new TextDecoder();
    let text = '';
    while ((text.match(/event: response\.output_text\.delta\n/g) ?? []).length < 3) {
      const read = await reader.read();
      if (read.done) throw new Error('the stream ended early');
      text += decoder.decode(read.value, { stream: true });
    }
    await reader.cancel();
    await t.gateway.idle();
    const delivered = text
      .split('\n\n')
      .filter((block) => block.startsWith('event: response.output_text.delta'))
      .map((block) => JSON.parse(block.split('\n')[1]?.slice('data: '.length) ?? 'null').delta)
      .join('');
    expect(delivered.split(' ').filter(Boolean)).toHaveLength(3);
    // The prompt estimate of 'Count to ten' is 7 tokens (see the cut-stream test above).
    const after = await t.balance();
    expect([before.balance - after.balance, after.held]).toEqual([cost(7, Math.ceil(delivered.length / 4)), 0]);
    expect(await t.inFlight()).toBe(0);
  });

  it('refuses a tee model with invalid_parameter naming model: its replies are never rewritten', async () => {
    const enclave = fakeOpenAI({ reply: TEN });
    const vault: ModelConfig = {
      id: 'vault',
      type: 'chat',
      tier: 'tee',
      provider: 'enclave',
      upstream: 'gpt-4o-mini',
      max_output_tokens: 1_000,
      price: CHAT_PRICE,
    };
    const provider = openaiCompatible({ baseURL: 'http://enclave.test/v1', apiKey: UPSTREAM_KEY, fetch: enclave.fetch, attest: async () => undefined });
    const t = await setup({ providers: { enclave: provider }, models: [vault] });
    const before = await t.balance();
    const refused = await t.post('/v1/responses', { model: 'vault', input: 'Hello' });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-request-id')).toBeNull();
    expect((await refused.json()).error).toMatchObject({ code: 'invalid_parameter', message: expect.stringMatching(/^model /) });
    expect(enclave.requests).toHaveLength(0);
    expect(await t.balance()).toEqual(before);
    expect((await t.post('/v1/chat/completions', chatBody({ model: 'vault' }))).status).toBe(200);
  });
});
