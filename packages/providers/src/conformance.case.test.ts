/**
 * The adapter conformance suite: every chat adapter runs it against its fake upstream
 * (`runProviderConformance('anthropic', () => ...)` in conformance.test.ts). It checks what the
 * gateway relies on: OpenAI-shaped replies and chunks, usage, tools, images, error codes and
 * `accepted`, Retry-After, no leaked bodies or keys, and no leaked upstream connections.
 */
import type { ChatCompletionChunk, ChatMessage, ChatTool } from '@tollgate/core';
import type { FakeToolCall, FakeUpstream, Fault } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { type ChatProvider, ProviderError, type ProviderChatRequest } from './provider';

/** Behaviour a conformance run asks of the fake; the `make` of each adapter forwards it. */
export interface ConformanceFakeOptions {
  /** The reply text. */
  reply?: string;
  /** Tool calls the fake makes when the request offers tools. */
  toolCalls?: FakeToolCall[];
  /** Prompt tokens the upstream reports as read from its cache. */
  cachedTokens?: number;
  /** The reasoning text of requests that ask for reasoning. */
  thinking?: string;
}

/** One adapter under test, wired to its fake. */
export interface ConformanceTarget {
  provider: ChatProvider;
  fake: FakeUpstream;
  /** The upstream model name to call; default `conformance-model`. */
  upstream?: string;
  /** What this family's upstream reports; checks of the rest are skipped. Default: none. */
  reports?: { cachedTokens?: boolean; reasoningTokens?: boolean };
}

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEATHER: ChatTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const PARIS: FakeToolCall = { name: 'get_weather', arguments: '{"city":"Paris"}' };
const TOKYO: FakeToolCall = { name: 'get_weather', arguments: '{"city":"Tokyo","unit":"celsius"}' };

function chatRequest(messages: ChatMessage[], extra: Partial<ProviderChatRequest> = {}): ProviderChatRequest {
  return { model: 'conformance', messages, stream: false, max_completion_tokens: 256, ...extra };
}

const hello = (extra: Partial<ProviderChatRequest> = {}) => chatRequest([{ role: 'user', content: 'Say hello to the conformance suite' }], extra);

async function readAll(stream: ReadableStream<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) chunks.push(chunk);
  return chunks;
}

/** The error of a streamed call, whether it came before the stream (status) or inside it. */
async function streamError(run: () => Promise<ReadableStream<ChatCompletionChunk>>): Promise<unknown> {
  try {
    await readAll(await run());
  } catch (error) {
    return error;
  }
  return undefined;
}

async function chatError(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  return undefined;
}

/**
 * Waits until the fake has no upstream body open: cancellations and aborts close it on later
 * microtasks and timer turns, which a busy machine may push past any fixed wait. Fails after 5 s.
 */
const noneOpen = (fake: FakeUpstream) => expect.poll(() => fake.open, { timeout: 5_000, interval: 1 }).toBe(0);

/** Content and tool calls of a stream, assembled the way an OpenAI client does. */
function assemble(chunks: ChatCompletionChunk[]) {
  let content = '';
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      content += choice.delta.content ?? '';
      for (const delta of choice.delta.tool_calls ?? []) {
        calls[delta.index] ??= { arguments: '' };
        const call = calls[delta.index]!;
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? '';
      }
    }
  }
  return { content, calls };
}

/** Runs the conformance suite against one adapter. */
export function runProviderConformance(label: string, make: (options?: ConformanceFakeOptions) => ConformanceTarget): void {
  const setup = (options?: ConformanceFakeOptions) => {
    const target = make(options);
    return { ...target, call: { upstream: target.upstream ?? 'conformance-model' } };
  };

  describe(`${label}: provider conformance`, () => {
    describe('chat', () => {
      it('returns the reply as an OpenAI chat completion with exact usage', async () => {
        const { provider, fake, call } = setup({ reply: 'Alpha beta gamma.' });
        const reply = await provider.chat!(hello(), call);
        expect(reply.object).toBe('chat.completion');
        expect(reply.choices).toHaveLength(1);
        expect(reply.choices[0]!.message).toMatchObject({ role: 'assistant', content: 'Alpha beta gamma.' });
        expect(reply.choices[0]!.message.tool_calls).toBeUndefined();
        expect(reply.choices[0]!.finish_reason).toBe('stop');
        expect(reply.usage!.completion_tokens).toBe(3);
        expect(reply.usage!.prompt_tokens).toBeGreaterThan(0);
        expect(reply.usage!.total_tokens).toBe(reply.usage!.prompt_tokens + 3);
        expect(fake.requests).toHaveLength(1);
        expect(fake.open).toBe(0);
      });

      it('stops at the output limit with finish_reason length', async () => {
        const { provider, call } = setup({ reply: 'one two three four five six' });
        const reply = await provider.chat!(hello({ max_completion_tokens: 2 }), call);
        expect(reply.choices[0]!.finish_reason).toBe('length');
        expect(reply.choices[0]!.message.content).toBe('one two');
        expect(reply.usage!.completion_tokens).toBe(2);
      });

      it('sends system and developer text and accepts a multi-turn history', async () => {
        const { provider, fake, call } = setup({ reply: 'Sure.' });
        const reply = await provider.chat!(
          chatRequest([
            { role: 'system', content: 'You are terse.' },
            { role: 'developer', content: 'Answer in English.' },
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: 'Hello!' },
            { role: 'user', content: [{ type: 'text', text: 'Again' }] },
          ]),
          call,
        );
        expect(reply.choices[0]!.message.content).toBe('Sure.');
        const sent = JSON.stringify(fake.requests[0]!.body);
        expect(sent).toContain('You are terse.');
        expect(sent).toContain('Answer in English.');
      });

      it('sends an inline image and an inline file of a user message', async () => {
        const { provider, fake, call } = setup({ reply: 'A pixel.' });
        const reply = await provider.chat!(
          chatRequest([
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1X1}` } },
              ],
            },
          ]),
          call,
        );
        expect(reply.choices[0]!.message.content).toBe('A pixel.');
        expect(JSON.stringify(fake.requests[0]!.body)).toContain(PNG_1X1);
      });
    });

    describe('streaming', () => {
      it('streams the role first, content deltas, one finish chunk, then a usage chunk', async () => {
        const { provider, fake, call } = setup({ reply: 'Alpha beta gamma.' });
        const chunks = await readAll(await provider.chatStream!(hello({ stream: true }), call));
        expect(chunks[0]!.object).toBe('chat.completion.chunk');
        expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
        const withChoices = chunks.filter((chunk) => chunk.choices.length > 0);
        const finishes = withChoices.map((chunk) => chunk.choices[0]!.finish_reason);
        expect(finishes.slice(0, -1).every((reason) => reason === null)).toBe(true);
        expect(finishes[finishes.length - 1]).toBe('stop');
        expect(assemble(chunks).content).toBe('Alpha beta gamma.');
        const last = chunks[chunks.length - 1]!;
        expect(last.choices).toEqual([]);
        expect(last.usage!.completion_tokens).toBe(3);
        expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + 3);
        expect(chunks.filter((chunk) => chunk.usage)).toHaveLength(1);
        expect(fake.open).toBe(0);
      });

      it('streams finish_reason length at the output limit', async () => {
        const { provider, call } = setup({ reply: 'one two three four five six' });
        const chunks = await readAll(await provider.chatStream!(hello({ stream: true, max_completion_tokens: 2 }), call));
        expect(assemble(chunks).content).toBe('one two');
        const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
        expect(finish.map((chunk) => chunk.choices[0]!.finish_reason)).toEqual(['length']);
        expect(chunks[chunks.length - 1]!.usage!.completion_tokens).toBe(2);
      });
    });

    describe('tools', () => {
      it('returns a tool call with its id, name and JSON arguments', async () => {
        const { provider, call } = setup({ toolCalls: [PARIS] });
        const reply = await provider.chat!(hello({ tools: [WEATHER] }), call);
        const calls = reply.choices[0]!.message.tool_calls!;
        expect(reply.choices[0]!.finish_reason).toBe('tool_calls');
        expect(calls).toHaveLength(1);
        expect(calls[0]!.type).toBe('function');
        expect(calls[0]!.id).toMatch(/^\S+$/);
        expect(calls[0]!.function.name).toBe('get_weather');
        expect(JSON.parse(calls[0]!.function.arguments)).toEqual({ city: 'Paris' });
      });

      it('returns parallel tool calls in order', async () => {
        const { provider, call } = setup({ toolCalls: [PARIS, TOKYO] });
        const reply = await provider.chat!(hello({ tools: [WEATHER] }), call);
        const calls = reply.choices[0]!.message.tool_calls!;
        expect(calls.map((item) => JSON.parse(item.function.arguments))).toEqual([{ city: 'Paris' }, { city: 'Tokyo', unit: 'celsius' }]);
        expect(new Set(calls.map((item) => item.id)).size).toBe(2);
      });

      it('streams tool calls: id and name first, argument deltas that join to the JSON', async () => {
        const { provider, call } = setup({ toolCalls: [PARIS, TOKYO] });
        const chunks = await readAll(await provider.chatStream!(hello({ stream: true, tools: [WEATHER] }), call));
        const { calls } = assemble(chunks);
        expect(calls).toHaveLength(2);
        expect(calls.map((item) => item.name)).toEqual(['get_weather', 'get_weather']);
        expect(calls.every((item) => typeof item.id === 'string' && item.id.length > 0)).toBe(true);
        expect(calls.map((item) => JSON.parse(item.arguments))).toEqual([{ city: 'Paris' }, { city: 'Tokyo', unit: 'celsius' }]);
        const firstDeltas = [0, 1].map((index) => chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []).find((delta) => delta.index === index)!);
        expect(firstDeltas.map((delta) => [Boolean(delta.id), delta.function?.name])).toEqual([
          [true, 'get_weather'],
          [true, 'get_weather'],
        ]);
        const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason).map((chunk) => chunk.choices[0]!.finish_reason);
        expect(finish).toEqual(['tool_calls']);
      });

      it('sends back assistant tool calls and their results, and gets the answer', async () => {
        const { provider, call } = setup({ reply: 'It is sunny in Paris and Tokyo.', toolCalls: [PARIS] });
        const reply = await provider.chat!(
          chatRequest(
            [
              { role: 'user', content: 'Weather in Paris and Tokyo?' },
              {
                role: 'assistant',
                content: null,
                tool_calls: [
                  { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
                  { id: 'call_tokyo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
                ],
              },
              { role: 'tool', tool_call_id: 'call_paris', content: '{"sky":"sunny"}' },
              { role: 'tool', tool_call_id: 'call_tokyo', content: 'sunny' },
            ],
            { tools: [WEATHER] },
          ),
          call,
        );
        expect(reply.choices[0]!.finish_reason).toBe('stop');
        expect(reply.choices[0]!.message.content).toBe('It is sunny in Paris and Tokyo.');
      });
    });

    describe('usage details', () => {
      it('reports cached prompt tokens', async (context) => {
        const { provider, reports, call } = setup({ cachedTokens: 3 });
        if (!reports?.cachedTokens) return context.skip();
        const reply = await provider.chat!(hello(), call);
        expect(reply.usage!.prompt_tokens_details?.cached_tokens).toBe(3);
        expect(reply.usage!.prompt_tokens).toBeGreaterThan(3);
        const chunks = await readAll(await provider.chatStream!(hello({ stream: true }), call));
        expect(chunks[chunks.length - 1]!.usage!.prompt_tokens_details?.cached_tokens).toBe(3);
      });

      it('reports reasoning tokens inside the completion tokens', async (context) => {
        const { provider, reports, call } = setup({ reply: 'Hello there.', thinking: 'think think think think' });
        if (!reports?.reasoningTokens) return context.skip();
        const reply = await provider.chat!(hello({ reasoning_effort: 'high', max_completion_tokens: 30000 }), call);
        expect(reply.usage!.completion_tokens_details?.reasoning_tokens).toBe(4);
        expect(reply.usage!.completion_tokens).toBe(6);
        expect(reply.choices[0]!.message.content).toBe('Hello there.');
        const chunks = await readAll(await provider.chatStream!(hello({ stream: true, reasoning_effort: 'high', max_completion_tokens: 30000 }), call));
        expect(assemble(chunks).content).toBe('Hello there.');
        expect(chunks[chunks.length - 1]!.usage).toMatchObject({ completion_tokens: 6, completion_tokens_details: { reasoning_tokens: 4 } });
      });
    });

    describe('errors', () => {
      const cases: [string, Fault, string, boolean, number | undefined][] = [
        ['context too long', { kind: 'status', status: 400, code: 'context_length_exceeded' }, 'context_length_exceeded', true, undefined],
        ['content filtered', { kind: 'status', status: 400, code: 'content_filter' }, 'content_filter', true, undefined],
        ['another 400', { kind: 'status', status: 400 }, 'invalid_request', true, undefined],
        ['413', { kind: 'status', status: 413 }, 'request_too_large', true, undefined],
        ['429 with Retry-After', { kind: 'status', status: 429, retryAfter: 7 }, 'upstream_busy', false, 7],
        ['503', { kind: 'status', status: 503 }, 'upstream_unavailable', false, undefined],
        ['500', { kind: 'status', status: 500 }, 'upstream_error', true, undefined],
        ['401 (our key)', { kind: 'status', status: 401, code: 'invalid_api_key' }, 'upstream_error', true, undefined],
        ['404 (our model name)', { kind: 'status', status: 404, code: 'model_not_found' }, 'upstream_error', true, undefined],
        ['connection refused', { kind: 'refuse' }, 'upstream_unavailable', false, undefined],
      ];
      for (const [name, fault, code, accepted, retryAfter] of cases) {
        it(`maps ${name} to ${code} (chat and stream)`, async () => {
          const { provider, fake, call } = setup();
          fake.setFaults([fault, fault]);
          for (const error of [
            await chatError(() => provider.chat!(hello(), call)),
            await streamError(() => provider.chatStream!(hello({ stream: true }), call)),
          ]) {
            expect(error).toBeInstanceOf(ProviderError);
            expect((error as ProviderError).code).toBe(code);
            expect((error as ProviderError).accepted).toBe(accepted);
            if (retryAfter !== undefined) expect((error as ProviderError).retryAfter).toBe(retryAfter);
          }
          await noneOpen(fake);
        });
      }

      it('never puts the upstream body or the provider key in the error', async () => {
        const { provider, fake, call } = setup();
        const secret = 'SECRET-UPSTREAM-DETAIL';
        fake.setFaults([
          { kind: 'status', status: 400, message: `${secret} bad field` },
          { kind: 'status', status: 500, message: secret },
        ]);
        const errors = [await chatError(() => provider.chat!(hello(), call)), await chatError(() => provider.chat!(hello(), call))];
        const keys = Object.entries(fake.requests[0]!.headers)
          .filter(([name]) => /authorization|api-key/.test(name))
          .map(([, value]) => value.replace(/^Bearer /, ''));
        expect(keys.length).toBeGreaterThan(0);
        for (const error of errors) {
          expect(error).toBeInstanceOf(ProviderError);
          const shown = `${String(error)} ${(error as Error).message} ${JSON.stringify(error)} ${(error as Error).stack ?? ''}`;
          expect(shown).not.toContain(secret);
          for (const key of keys) expect(shown).not.toContain(key);
        }
      });

      it('errors the stream with a mapped ProviderError on an error event mid-stream', async () => {
        const { provider, fake, call } = setup({ reply: 'one two three four five six seven eight' });
        fake.setFaults([{ kind: 'error-event', afterChunks: 3, status: 500 }]);
        const stream = await provider.chatStream!(hello({ stream: true }), call);
        const error = await streamError(async () => stream);
        expect(error).toBeInstanceOf(ProviderError);
        expect((error as ProviderError).code).toBe('upstream_error');
        expect((error as ProviderError).accepted).toBe(true);
        await noneOpen(fake);
      });

      for (const fault of [
        { kind: 'cut', afterChunks: 3 },
        { kind: 'truncate', afterChunks: 3 },
        { kind: 'malformed', afterChunks: 2 },
      ] as Fault[]) {
        it(`errors the stream with upstream_error on a ${fault.kind} stream`, async () => {
          const { provider, fake, call } = setup({ reply: 'one two three four five six seven eight' });
          fake.setFaults([fault]);
          const error = await streamError(() => provider.chatStream!(hello({ stream: true }), call));
          expect(error).toBeInstanceOf(ProviderError);
          expect((error as ProviderError).code).toBe('upstream_error');
          expect((error as ProviderError).accepted).toBe(true);
          await noneOpen(fake);
        });
      }

      it('maps a malformed non-streamed body to upstream_error', async () => {
        const { provider, fake, call } = setup();
        fake.setFaults([{ kind: 'malformed', afterChunks: 0 }]);
        const error = await chatError(() => provider.chat!(hello(), call));
        expect((error as ProviderError).code).toBe('upstream_error');
        expect((error as ProviderError).accepted).toBe(true);
      });
    });

    describe('cancellation', () => {
      it('cancelling the stream closes the upstream body', async () => {
        const { provider, fake, call } = setup({ reply: 'one two three four five six seven eight' });
        fake.setFaults([{ kind: 'stall', afterChunks: 2 }]);
        const stream = await provider.chatStream!(hello({ stream: true }), call);
        const reader = stream.getReader();
        const first = await reader.read();
        expect(first.value!.choices[0]!.delta.role).toBe('assistant');
        expect(fake.open).toBe(1);
        await reader.cancel();
        await noneOpen(fake);
      });

      it('aborting the call signal ends the stream and closes the upstream body', async () => {
        const { provider, fake, call } = setup({ reply: 'one two three four five six seven eight' });
        fake.setFaults([{ kind: 'stall', afterChunks: 2 }]);
        const controller = new AbortController();
        const stream = await provider.chatStream!(hello({ stream: true }), { ...call, signal: controller.signal });
        const reader = stream.getReader();
        await reader.read();
        expect(fake.open).toBe(1);
        controller.abort();
        // Chunks already translated may still be handed out; then the stream must error, not end.
        let outcome: 'done' | 'error' | undefined;
        for (let reads = 0; outcome === undefined && reads < 50; reads++) {
          outcome = await reader.read().then(
            (result) => (result.done ? 'done' : undefined),
            () => 'error' as const,
          );
        }
        expect(outcome).toBe('error');
        await noneOpen(fake);
      });

      it('an abort before the reply rejects the call without a ProviderError', async () => {
        const { provider, call } = setup();
        const controller = new AbortController();
        controller.abort();
        const error = await chatError(() => provider.chat!(hello(), { ...call, signal: controller.signal }));
        expect(error).toBeDefined();
        expect(error).not.toBeInstanceOf(ProviderError);
      });
    });
  });
}
