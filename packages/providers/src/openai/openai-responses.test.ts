import { fakeOpenAIResponses } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { openaiCompatible } from './openai-compatible';
import { openaiResponses } from './openai-responses';
import type { ResponsesWireEvent } from './openai-responses-stream';

function native(fake: ReturnType<typeof fakeOpenAIResponses>) {
  return openaiResponses({ url: 'http://fake/v1/responses', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, fetch: fake.fetch });
}

async function all(stream: ReadableStream<ResponsesWireEvent>): Promise<ResponsesWireEvent[]> {
  const events: ResponsesWireEvent[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) events.push(read.value);
  return events;
}

describe('openaiResponses (native pass-through)', () => {
  it('a whole response: the upstream model name and store: false go up; the object comes back as sent', async () => {
    const fake = fakeOpenAIResponses({ apiKey: 'k', reply: 'Hi there' });
    const response = await native(fake).responses({ model: 'client-id', input: 'Hello', store: true }, { upstream: 'gpt-4.1' });
    expect(fake.requests[0]?.body).toEqual({ model: 'gpt-4.1', input: 'Hello', store: false, stream: false });
    expect(response).toMatchObject({ object: 'response', status: 'completed', usage: { input_tokens: 1, output_tokens: 2 } });
  });

  it('a stream: every event parsed once, ending with the terminal event; the body released', async () => {
    const fake = fakeOpenAIResponses({ reply: 'one two three' });
    const events = await all(await native(fake).responsesStream({ input: 'Hi' }, { upstream: 'gpt-4.1' }));
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.at(-1)?.data).toMatchObject({ response: { usage: { output_tokens: 3 } } });
    expect(fake.open).toBe(0);
  });

  it('a refusal maps like chat; a cut stream errors upstream_error; an unknown parameter is invalid_request', async () => {
    const limited = fakeOpenAIResponses({ faults: [{ kind: 'status', status: 429 }] });
    await expect(native(limited).responses({ input: 'Hi' }, { upstream: 'gpt-4.1' })).rejects.toMatchObject({ code: 'upstream_busy', accepted: false });
    const cut = fakeOpenAIResponses({ faults: [{ kind: 'cut', afterChunks: 3 }] });
    const stream = await native(cut).responsesStream({ input: 'Hi' }, { upstream: 'gpt-4.1' });
    const failure = await all(stream).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure).toMatchObject({ code: 'upstream_error' });
    const erring = fakeOpenAIResponses({ faults: [{ kind: 'error-event', afterChunks: 4, code: 'context_length_exceeded' }] });
    const events: ResponsesWireEvent[] = [];
    const reader = (await native(erring).responsesStream({ input: 'Hi' }, { upstream: 'gpt-4.1' })).getReader();
    const mapped = await (async () => {
      for (let read = await reader.read(); !read.done; read = await reader.read()) events.push(read.value);
      return 'ended without an error';
    })().catch((error: unknown) => error);
    expect([events.length, mapped]).toEqual([4, expect.objectContaining({ code: 'context_length_exceeded', accepted: true })]);
    expect(erring.open).toBe(0);
    const strict = fakeOpenAIResponses();
    await expect(native(strict).responses({ input: 'Hi', bogus: 1 }, { upstream: 'gpt-4.1' })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});

describe('openaiCompatible({ responsesApi })', () => {
  it('true: POST {baseURL}/responses with the provider credential and headers; attest kept', async () => {
    const fake = fakeOpenAIResponses({ apiKey: 'sk-up', reply: 'Hi there' });
    const seen: { url: string; headers: Headers }[] = [];
    const fetch: typeof globalThis.fetch = (input, init) => {
      seen.push({ url: String(input), headers: new Headers(init?.headers) });
      return fake.fetch(input, init);
    };
    const attest = async () => undefined;
    const provider = openaiCompatible({ baseURL: 'http://up.test/v1/', apiKey: 'sk-up', headers: { 'x-team': 'a' }, fetch, attest, responsesApi: true });
    const response = await provider.responses({ input: 'Hello' }, { upstream: 'gpt-4.1' });
    expect(response).toMatchObject({ object: 'response', status: 'completed' });
    expect(seen.map((call) => [call.url, call.headers.get('authorization'), call.headers.get('x-team'), call.headers.get('accept')])).toEqual([
      ['http://up.test/v1/responses', 'Bearer sk-up', 'a', 'application/json'],
    ]);
    const events = await all(await provider.responsesStream({ input: 'Hello' }, { upstream: 'gpt-4.1' }));
    expect([seen[1]?.url, seen[1]?.headers.get('accept'), events.at(-1)?.type]).toEqual([
      'http://up.test/v1/responses',
      'text/event-stream',
      'response.completed',
    ]);
    expect(provider.attest).toBe(attest);
    expect(provider.kind).toBe('openai-compatible');
  });

  it('absent or false: no Responses calls, so the gateway translates chat for /v1/responses', () => {
    expect('responses' in openaiCompatible({ baseURL: 'http://up.test/v1' })).toBe(false);
    expect('responsesStream' in openaiCompatible({ baseURL: 'http://up.test/v1', responsesApi: false })).toBe(false);
  });
});
