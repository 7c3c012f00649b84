import { createSseDecoder } from '@tollgate/sse';
import { describe, expect, it } from 'vitest';
import { textStream, toolUseStream } from './__fixtures__/anthropic-transcripts';
import { fakeAnthropic } from './fake-anthropic';

const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' };
const BASE = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi there' }] };

function post(fake: ReturnType<typeof fakeAnthropic>, body: unknown, headers: Record<string, string> = HEADERS, path = '/v1/messages') {
  return fake.fetch(`http://fake${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function events(text: string | ReadableStream<Uint8Array>) {
  const body = typeof text === 'string' ? new Response(text).body! : text;
  const out: { event?: string; data: Record<string, unknown> }[] = [];
  for await (const item of body.pipeThrough(createSseDecoder()) as unknown as AsyncIterable<{ event?: string; data: string }>) {
    out.push({ event: item.event, data: JSON.parse(item.data) as Record<string, unknown> });
  }
  return out;
}

/** The event names with runs of deltas collapsed: the grammar of a transcript. */
const grammar = (list: { event?: string }[]) =>
  list.map((item) => item.event).filter((name, index, all) => name !== 'content_block_delta' || all[index - 1] !== 'content_block_delta');

describe('fakeAnthropic', () => {
  it('answers like the API: message body, usage, headers', async () => {
    const fake = fakeAnthropic({ reply: 'One two three.' });
    const response = await post(fake, BASE);
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_011C/);
    const body = await response.json();
    expect(body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'One two three.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 2, output_tokens: 3, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
    expect(body.id).toMatch(/^msg_01/);
  });

  it('streams the same event grammar and field sets as the recorded transcripts', async () => {
    const fake = fakeAnthropic({
      reply: 'Okay, checking.',
      toolCalls: [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      ],
    });
    const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const text = await events((await post(fake, { ...BASE, stream: true })).body!);
    const recorded = await events(textStream);
    expect(grammar(text)).toEqual(grammar(recorded));
    expect(Object.keys(text[0]!.data.message as object)).toEqual(expect.arrayContaining(Object.keys(recorded[0]!.data.message as object)));
    expect(text.every((item) => item.event === item.data.type)).toBe(true);
    const tool = await events((await post(fake, { ...BASE, stream: true, tools })).body!);
    expect(grammar(tool)).toEqual(grammar(await events(toolUseStream)));
    const json = tool
      .filter((item) => (item.data.delta as { type?: string } | undefined)?.type === 'input_json_delta')
      .map((item) => (item.data.delta as { partial_json: string }).partial_json);
    expect(json[0]).toBe('');
  });

  const refusals: [string, unknown, Record<string, string> | undefined, number, string, string][] = [
    ['no max_tokens', { model: 'c', messages: BASE.messages }, undefined, 400, 'invalid_request_error', 'max_tokens: Field required'],
    [
      'a system role',
      { ...BASE, messages: [{ role: 'system', content: 'x' }, ...BASE.messages] },
      undefined,
      400,
      'invalid_request_error',
      "messages.0.role: Input should be 'user' or 'assistant'",
    ],
    [
      'two user turns',
      { ...BASE, messages: [...BASE.messages, ...BASE.messages] },
      undefined,
      400,
      'invalid_request_error',
      'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row',
    ],
    [
      'an OpenAI field',
      { ...BASE, stream_options: { include_usage: true } },
      undefined,
      400,
      'invalid_request_error',
      'stream_options: Extra inputs are not permitted',
    ],
    [
      'an empty text block',
      { ...BASE, messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
      undefined,
      400,
      'invalid_request_error',
      'messages: text content blocks must be non-empty',
    ],
    [
      'an orphan tool_result',
      { ...BASE, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }] },
      undefined,
      400,
      'invalid_request_error',
      'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    ],
    [
      'a thinking budget above max_tokens',
      { ...BASE, thinking: { type: 'enabled', budget_tokens: 2048 } },
      undefined,
      400,
      'invalid_request_error',
      '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
    ],
    [
      'no x-api-key',
      BASE,
      { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      401,
      'authentication_error',
      'x-api-key header is required',
    ],
    [
      'no anthropic-version',
      BASE,
      { 'content-type': 'application/json', 'x-api-key': 'k' },
      400,
      'invalid_request_error',
      'anthropic-version: header is required',
    ],
  ];
  for (const [name, body, headers, status, type, message] of refusals) {
    it(`refuses ${name} with the API's ${status}`, async () => {
      const response = await post(fakeAnthropic(), body, headers);
      expect(response.status).toBe(status);
      expect(await response.json()).toEqual({ type: 'error', error: { type, message }, request_id: 'req_011CFakeAnthropicError' });
    });
  }

  it('renders status faults as Anthropic errors: 529 overloaded, 429 with retry-after, neutral codes', async () => {
    const fake = fakeAnthropic({
      faults: [
        { kind: 'status', status: 529 },
        { kind: 'status', status: 429, retryAfter: 9 },
        { kind: 'status', status: 400, code: 'context_length_exceeded' },
      ],
    });
    const overloaded = await post(fake, BASE);
    expect([overloaded.status, (await overloaded.json()).error]).toEqual([529, { type: 'overloaded_error', message: 'Overloaded' }]);
    const limited = await post(fake, BASE);
    expect([limited.status, limited.headers.get('retry-after'), (await limited.json()).error.type]).toEqual([429, '9', 'rate_limit_error']);
    const long = await post(fake, BASE);
    expect((await long.json()).error.message).toMatch(/^prompt is too long: \d+ tokens > \d+ maximum$/);
  });

  it('reports cache reads and writes out of the prompt, and thinking inside output_tokens', async () => {
    const fake = fakeAnthropic({ reply: 'Yes.', thinking: 'a b c', cacheReadTokens: 1, cacheCreationTokens: 1 });
    const body = await (await post(fake, { ...BASE, max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 } })).json();
    expect(body.usage).toMatchObject({ input_tokens: 0, cache_read_input_tokens: 1, cache_creation_input_tokens: 1, output_tokens: 4 });
    expect(body.content[0]).toMatchObject({ type: 'thinking', thinking: 'a b c' });
  });

  it('closes the body when the client cancels a stalled stream', async () => {
    const fake = fakeAnthropic({ faults: [{ kind: 'stall', afterChunks: 2 }] });
    const reader = (await post(fake, { ...BASE, stream: true })).body!.getReader();
    await reader.read();
    expect(fake.open).toBe(1);
    await reader.cancel();
    expect(fake.open).toBe(0);
  });
});
