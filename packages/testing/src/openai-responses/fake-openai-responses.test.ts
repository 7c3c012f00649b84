import { describe, expect, it } from 'vitest';
import { fakeOpenAIResponses } from './fake-openai-responses';

const post = (fake: ReturnType<typeof fakeOpenAIResponses>, body: unknown) =>
  fake.fetch('http://fake/v1/responses', {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('fakeOpenAIResponses', () => {
  it('a whole response: a message item, usage in the Responses form, OpenAI extras', async () => {
    const fake = fakeOpenAIResponses({ apiKey: 'k', reply: 'Hi there friend', cachedTokens: 1, now: () => 1_700_000_000_000 });
    const response = await post(fake, { model: 'gpt-4.1', instructions: 'Be brief', input: 'Say hi', store: false });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      model: 'gpt-4.1-2025-04-14',
      store: false,
      instructions: 'Be brief',
      service_tier: 'default',
      output: [{ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there friend', annotations: [] }] }],
      usage: { input_tokens: 4, input_tokens_details: { cached_tokens: 1 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 7 },
    });
    expect(body.id).toMatch(/^resp_/);
    expect(body.output[0].id).toMatch(/^msg_/);
  });

  it('a stream: typed events, sequence numbers from 0, obfuscation on deltas, function calls, no [DONE]', async () => {
    const fake = fakeOpenAIResponses({ toolCalls: [{ name: 'f', arguments: '{"city":"Paris"}' }] });
    const response = await post(fake, { model: 'gpt-4.1', input: 'Weather?', tools: [{ type: 'function', name: 'f' }], stream: true });
    const text = await response.text();
    expect(text).not.toContain('[DONE]');
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => {
        const [event, data] = block.split('\n');
        const json = JSON.parse((data ?? '').slice('data: '.length));
        expect(event).toBe(`event: ${json.type}`);
        return json;
      });
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(events[3].obfuscation).toEqual(expect.any(String));
    expect(events[5].arguments).toBe('{"city":"Paris"}');
    expect(events[7].response.output[0]).toMatchObject({
      type: 'function_call',
      name: 'f',
      arguments: '{"city":"Paris"}',
      call_id: expect.stringMatching(/^call_/),
    });
  });

  it("the error-event fault: OpenAI's error event, typed error, on the stream's numbering, then the end", async () => {
    const fake = fakeOpenAIResponses({ reply: 'one two three', faults: [{ kind: 'error-event', afterChunks: 5, code: 'server_error', message: 'Boom' }] });
    const text = await (await post(fake, { model: 'gpt-4.1', input: 'Hi', stream: true })).text();
    const blocks = text.split('\n\n').filter(Boolean);
    expect(blocks).toHaveLength(6);
    expect(blocks.at(-1)).toBe('event: error\ndata: {"type":"error","sequence_number":5,"code":"server_error","message":"Boom","param":null}');
  });

  it('refuses an unknown parameter and a missing input as OpenAI does', async () => {
    const fake = fakeOpenAIResponses();
    const unknown = await post(fake, { model: 'gpt-4.1', input: 'x', messages: [] });
    expect([unknown.status, (await unknown.json()).error]).toEqual([
      400,
      expect.objectContaining({ code: 'unknown_parameter', param: 'messages', message: "Unknown parameter: 'messages'." }),
    ]);
    const missing = await post(fake, { model: 'gpt-4.1' });
    expect([missing.status, (await missing.json()).error.param]).toEqual([400, 'input']);
  });

  it('cuts at max_output_tokens: an incomplete response', async () => {
    const fake = fakeOpenAIResponses({ reply: 'one two three four five' });
    const body = await (await post(fake, { model: 'gpt-4.1', input: 'x', max_output_tokens: 2 })).json();
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: { output_tokens: 2 } });
  });
});
