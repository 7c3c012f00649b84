/**
 * POST /v1/responses through `gateway.fetch`: the chat translation and the native pass-through,
 * metered like chat (admission, limits, hold, settlement, early stops), with exact amounts.
 */
import { openaiCompatible } from '@tollgate/providers';
import { fakeOpenAIResponses } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { setup, testModels, UPSTREAM_KEY } from '../test/test-harness';

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
    expect(
      list
        .filter((event) => event.type === 'response.output_text.delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(TEN);
    expect(list.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 3, output_tokens: 10 } } });
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(3, 10));
  });

  it('a stream the upstream breaks off ends with response.failed and pays what was delivered', async () => {
    const t = await setup({ fakeOptions: { reply: TEN, faults: [{ kind: 'cut', afterChunks: 4 }] } });
    const before = await t.balance();
    const list = await events(await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true }));
    const delivered = list
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
    const last = list.at(-1);
    expect(last).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'upstream_error' } } });
    // No usage came: the prompt estimate (12 ASCII bytes / 4 = 3, plus 4 for the message) and the delivered text.
    expect(last?.response.usage).toMatchObject({ input_tokens: 7, output_tokens: Math.ceil(delivered.length / 4) });
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(7, Math.ceil(delivered.length / 4)));
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
    const response = await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', metadata: { a: 'b' }, temperature: 0.5 });
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
    const { provider } = native();
    const t = await setup({ providers: { local: provider }, models: testModels() });
    const before = await t.balance();
    const list = await events(await t.post('/v1/responses', { model: 'fast', input: 'Count to ten', stream: true }));
    expect(list[0]).toMatchObject({ type: 'response.created', response: { model: 'fast' } });
    expect(list.at(-1)).toMatchObject({ type: 'response.completed', response: { model: 'fast', usage: { input_tokens: 3, output_tokens: 10 } } });
    expect(list.find((event) => event.type === 'response.output_text.delta')?.obfuscation).toEqual(expect.any(String));
    await t.gateway.idle();
    expect((await t.balance()).balance).toBe(before.balance - cost(3, 10));
  });
});
