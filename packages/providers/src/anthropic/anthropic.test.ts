import type { ChatCompletionChunk } from '@tollgate/core';
import { fakeAnthropic } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError, type ProviderChatRequest } from '../provider';
import { anthropic } from './anthropic';

const hello: ProviderChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Hello there' }], stream: false, max_completion_tokens: 100 };

function setup(options: Parameters<typeof fakeAnthropic>[0] = {}) {
  const fake = fakeAnthropic({ apiKey: 'sk-ant-test', sleep: async () => {}, ...options });
  const provider = anthropic({ baseURL: 'http://fake/v1/', apiKey: 'sk-ant-test', headers: { 'anthropic-beta': 'test-beta' }, fetch: fake.fetch });
  return { fake, provider };
}

describe('anthropic', () => {
  it('POSTs to {baseURL}/messages with x-api-key, anthropic-version and the operator headers', async () => {
    const { fake, provider } = setup();
    await provider.chat!(hello, { upstream: 'claude-haiku-4-5' });
    const sent = fake.requests[0]!;
    expect(sent.url).toBe('http://fake/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['anthropic-beta']).toBe('test-beta');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({ model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }] });
  });

  it('describes itself for the gateway', () => {
    const attest = async () => {};
    expect(anthropic({ zeroDataRetention: true, attest })).toMatchObject({ kind: 'anthropic', zeroDataRetention: true, attest });
    expect(anthropic().zeroDataRetention).toBe(false);
  });

  it('streams with stream: true and no OpenAI-only fields upstream', async () => {
    const { fake, provider } = setup({ reply: 'Hi!' });
    const stream = await provider.chatStream!({ ...hello, stream: true, stream_options: { include_usage: false } }, { upstream: 'claude-haiku-4-5' });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) chunks.push(chunk);
    expect(fake.requests[0]!.body.stream).toBe(true);
    expect(fake.requests[0]!.body.stream_options).toBeUndefined();
    // Usage is always reported: the gateway strips it when the client did not ask.
    expect(chunks[chunks.length - 1]!.usage).toMatchObject({ completion_tokens: 1 });
  });

  it('maps a refusal to finish_reason content_filter', async () => {
    const { provider } = setup({ reply: 'I cannot help with that.', stopReason: 'refusal' });
    const reply = await provider.chat!(hello, { upstream: 'c' });
    expect(reply.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'I cannot help with that.', refusal: null } });
  });

  it('sends thinking for reasoning_effort and leaves the thinking text out of the reply', async () => {
    const { fake, provider } = setup({ reply: 'Four.', thinking: 'two plus two is four' });
    const reply = await provider.chat!({ ...hello, reasoning_effort: 'medium', max_completion_tokens: 10000 }, { upstream: 'c' });
    expect(fake.requests[0]!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(reply.choices[0]!.message.content).toBe('Four.');
    expect(reply.usage).toMatchObject({ completion_tokens: 6 });
  });

  it('maps 529 overloaded_error to upstream_busy, not accepted, with Retry-After', async () => {
    const { provider } = setup({ faults: [{ kind: 'status', status: 529, retryAfter: 12 }] });
    const error = await provider.chat!(hello, { upstream: 'c' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: 'upstream_busy', accepted: false, retryAfter: 12, status: 529 });
  });

  it('maps our account out of credit (a 400 invalid_request_error on the wire) to upstream_error, not accepted', async () => {
    const { provider } = setup({ faults: [{ kind: 'status', status: 400, code: 'insufficient_quota' }] });
    const error = await provider.chat!(hello, { upstream: 'c' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'upstream_error', accepted: false, status: 400 });
  });

  it('maps an overloaded_error event mid-stream to upstream_busy', async () => {
    const { fake, provider } = setup({ reply: 'one two three four', faults: [{ kind: 'error-event', afterChunks: 4 }] });
    const stream = await provider.chatStream!({ ...hello, stream: true }, { upstream: 'c' });
    const error = await (async () => {
      for await (const _ of stream as unknown as AsyncIterable<ChatCompletionChunk>) void _;
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'upstream_busy', accepted: true });
    expect(fake.open).toBe(0);
  });

  it('a connection reset (not a refused connect) may have reached the upstream: upstream_error, accepted', async () => {
    const reset = (async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    }) as typeof globalThis.fetch;
    const error = await anthropic({ apiKey: 'k', fetch: reset }).chat!(hello, { upstream: 'c' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'upstream_error', accepted: true });
  });

  it('refuses an untranslatable request before sending it, as not accepted', async () => {
    const { fake, provider } = setup();
    const request: ProviderChatRequest = { ...hello, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA' } }] }] };
    const error = await provider.chat!(request, { upstream: 'c' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_request', accepted: false });
    expect(fake.requests).toHaveLength(0);
  });

  it('maps a 400 from the real validation (here: bad key pattern in a tool name) to invalid_request', async () => {
    const { provider } = setup();
    const request: ProviderChatRequest = { ...hello, tools: [{ type: 'function', function: { name: 'bad name!' } }] };
    const error = await provider.chat!(request, { upstream: 'c' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_request', accepted: true, status: 400 });
  });

  it('maps the fake context window to context_length_exceeded', async () => {
    const { provider } = setup({ contextTokens: 3 });
    const error = await provider.chat!({ ...hello, messages: [{ role: 'user', content: 'one two three four' }] }, { upstream: 'c' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'context_length_exceeded', status: 400 });
  });
});
