/**
 * Upstream replies are checked at the provider boundary: a reply that is JSON but not the shape
 * Tollgate reads is the spec's `upstream_error` (accepted, so no other route is tried), for every
 * provider family.
 */
import { describe, expect, it } from 'vitest';
import { anthropic } from './anthropic/anthropic';
import { gemini } from './gemini/gemini';
import { openaiCompatible } from './openai/openai-compatible';
import { ProviderError, type ProviderChatRequest } from './provider';
import { brave } from './search/brave';
import { searxng } from './search/searxng';

const hello: ProviderChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Hello' }], stream: false, max_completion_tokens: 100 };
const call = { upstream: 'model' };

/** A fetch that answers every request with `body` as JSON, status 200. */
const answers = (body: unknown) => async () => Response.json(body);

/** A fetch that answers with these SSE data lines. */
const streams = (events: unknown[]) => async () =>
  new Response(events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join(''), {
    headers: { 'content-type': 'text/event-stream' },
  });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof ProviderError)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

async function readAll(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const reader = stream.getReader();
  const chunks: unknown[] = [];
  for (;;) {
    const step = await reader.read();
    if (step.done) return chunks;
    chunks.push(step.value);
  }
}

const completion = (patch: Record<string, unknown>) => ({
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  ...patch,
});

const chunk = (patch: Record<string, unknown>) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], ...patch });

describe('a malformed upstream reply is upstream_error', () => {
  it('OpenAI-compatible, whole: choices that are no list, a message whose content is no text, usage that is no counts', async () => {
    const bad = [
      completion({ choices: { 0: {} } }),
      completion({ choices: ['hi'] }),
      completion({ choices: [{ index: 0, message: { role: 'assistant', content: 42 }, finish_reason: 'stop' }] }),
      completion({ choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'x', function: { name: 'f' } }] } }] }),
      completion({ usage: 'lots' }),
      completion({ usage: { prompt_tokens: '5', completion_tokens: 1 } }),
    ];
    for (const body of bad) {
      const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', fetch: answers(body) });
      const error = await failure(provider.chat!(hello, call));
      expect([error.code, error.accepted], JSON.stringify(body)).toEqual(['upstream_error', true]);
    }
    // The shapes OpenAI-compatible servers do send still pass: a choice without a message, usage with odd counts.
    for (const body of [completion({ choices: [{ index: 0, finish_reason: 'stop' }] }), completion({ usage: {} }), completion({ usage: null })]) {
      const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', fetch: answers(body) });
      expect(await provider.chat!(hello, call)).toEqual(body);
    }
  });

  it('OpenAI-compatible, streamed: a usage chunk whose counts are no numbers, or choices that are no list', async () => {
    const first = chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] });
    for (const bad of [chunk({ usage: { prompt_tokens: 'many', completion_tokens: 1 } }), chunk({ usage: 7 }), chunk({ choices: 'none' })]) {
      const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', fetch: streams([first, bad, '[DONE]']) });
      const stream = await provider.chatStream!({ ...hello, stream: true }, call);
      const error = await failure(readAll(stream));
      expect([error.code, error.accepted], JSON.stringify(bad)).toEqual(['upstream_error', true]);
    }
    // A well-formed usage chunk (and usage: null on the others) streams to its end.
    const usage = chunk({ usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } });
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', fetch: streams([{ ...first, usage: null }, usage, '[DONE]']) });
    expect(await readAll(await provider.chatStream!({ ...hello, stream: true }, call))).toEqual([{ ...first, usage: null }, usage]);
  });

  it('Anthropic: a message without an id, a text block without text, a tool_use without a name, usage that is no counts', async () => {
    const message = (patch: Record<string, unknown>) => ({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude',
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
      ...patch,
    });
    const bad = [
      message({ id: undefined }),
      message({ content: [{ type: 'text' }] }),
      message({ content: [{ type: 'tool_use', id: 't', input: {} }] }),
      message({ content: 'hi' }),
      message({ usage: { input_tokens: 'one' } }),
    ];
    for (const body of bad) {
      const provider = anthropic({ baseURL: 'http://upstream.test/v1', apiKey: 'k', fetch: answers(body) });
      const error = await failure(provider.chat!(hello, call));
      expect([error.code, error.accepted], JSON.stringify(body)).toEqual(['upstream_error', true]);
    }
    // A block type Tollgate does not read (a server tool's) is left out, not a failure.
    const provider = anthropic({
      baseURL: 'http://upstream.test/v1',
      apiKey: 'k',
      fetch: answers(
        message({
          content: [
            { type: 'server_tool_use', id: 's' },
            { type: 'text', text: 'hi' },
          ],
        }),
      ),
    });
    expect((await provider.chat!(hello, call)).choices[0]?.message.content).toBe('hi');
  });

  it('Gemini: candidates that are no list, a part whose text is no string, usage counts that are no numbers', async () => {
    const reply = (patch: Record<string, unknown>) => ({
      candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
      ...patch,
    });
    const bad = [
      reply({ candidates: { 0: {} } }),
      reply({ candidates: [{ content: { role: 'model', parts: [{ text: 5 }] } }] }),
      reply({ candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] }),
      reply({ usageMetadata: { promptTokenCount: '1' } }),
    ];
    for (const body of bad) {
      const provider = gemini({ baseURL: 'http://upstream.test/v1beta', apiKey: 'k', fetch: answers(body) });
      const error = await failure(provider.chat!(hello, call));
      expect([error.code, error.accepted], JSON.stringify(body)).toEqual(['upstream_error', true]);
    }
  });

  it('SearXNG: results that are no list, or a result that is no object', async () => {
    for (const body of [{}, { results: 'none' }, { results: [5] }, null]) {
      const provider = searxng({ baseURL: 'http://searxng.test', fetch: answers(body) });
      const error = await failure(provider.search!({ query: 'q', max_results: 5 }, call));
      expect([error.code, error.accepted], JSON.stringify(body)).toEqual(['upstream_error', true]);
    }
  });

  it('Brave: a reply that is no object, web.results that are no list, or a result that is no object', async () => {
    for (const body of [
      null,
      'results',
      { web: 'none' },
      { web: { results: { url: 'https://example.com' } } },
      { web: { results: ['https://example.com'] } },
    ]) {
      const provider = brave({ apiKey: 'k', fetch: answers(body) });
      const error = await failure(provider.search!({ query: 'q', max_results: 5 }, call));
      expect([error.code, error.accepted], JSON.stringify(body)).toEqual(['upstream_error', true]);
    }
  });
});
