import type { ChatCompletionChunk } from '@tollgate/core';
import { fakeOpenAI, type Fault } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError, type ProviderChatRequest } from '../provider';
import { openaiCompatible } from './openai-compatible';

const request: ProviderChatRequest = {
  model: 'client-model',
  messages: [{ role: 'user', content: 'Tell me three words' }],
  stream: false,
  max_completion_tokens: 50,
};
const streamed: ProviderChatRequest = { ...request, stream: true };
const options = { upstream: 'gpt-4o-mini' };

function setup(fake: Parameters<typeof fakeOpenAI>[0] = {}) {
  const upstream = fakeOpenAI({ apiKey: 'sk-secret-key', ...fake });
  const provider = openaiCompatible({ baseURL: 'http://fake/v1/', apiKey: 'sk-secret-key', fetch: upstream.fetch, headers: { 'x-org': 'tollgate' } });
  return { upstream, provider };
}

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) out.push(read.value);
  return out;
}

async function caught(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('openaiCompatible: chat', () => {
  it('posts the normalised request with the upstream model, key and headers', async () => {
    const { upstream, provider } = setup({ reply: 'one two three' });
    const completion = await provider.chat!(request, options);
    expect(completion.choices[0]!.message.content).toBe('one two three');
    expect(completion.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    const sent = upstream.requests[0]!;
    expect(sent.url).toBe('http://fake/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-secret-key');
    expect(sent.headers['x-org']).toBe('tollgate');
    expect(sent.body).toEqual({ model: 'gpt-4o-mini', messages: request.messages, max_completion_tokens: 50, stream: false });
    expect(upstream.open).toBe(0);
    expect(provider.kind).toBe('openai-compatible');
    expect(provider.zeroDataRetention).toBe(false);
  });

  it('returns tool calls', async () => {
    const { provider } = setup({ toolCalls: [{ name: 'lookup', arguments: '{"q":"x"}' }] });
    const tools = [{ type: 'function' as const, function: { name: 'lookup' } }];
    const completion = await provider.chat!({ ...request, tools }, options);
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]!.message.tool_calls![0]!.function).toEqual({ name: 'lookup', arguments: '{"q":"x"}' });
  });

  it('maps a body cut before its end to upstream_error (accepted)', async () => {
    const { upstream, provider } = setup({ faults: [{ kind: 'cut', afterChunks: 0 }] });
    const error = await caught(provider.chat!(request, options));
    expect([error.code, error.accepted]).toEqual(['upstream_error', true]);
    expect(upstream.open).toBe(0);
  });
});

describe('openaiCompatible: chatStream', () => {
  it('always asks for usage upstream and yields parsed chunks up to [DONE]', async () => {
    const { upstream, provider } = setup({ reply: 'alpha beta' });
    const chunks = await readAll(await provider.chatStream!(streamed, options));
    expect(upstream.requests[0]!.body).toEqual({
      model: 'gpt-4o-mini',
      messages: request.messages,
      max_completion_tokens: 50,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(upstream.requests[0]!.headers.accept).toBe('text/event-stream');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? null)).toEqual(['', 'alpha', ' beta', null, null]);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    expect(upstream.open).toBe(0);
  });

  it('streams tool-call argument deltas', async () => {
    const { provider } = setup({ toolCalls: [{ name: 'lookup', arguments: '{"query":"weather in Paris"}' }] });
    const tools = [{ type: 'function' as const, function: { name: 'lookup' } }];
    const chunks = await readAll(await provider.chatStream!({ ...streamed, tools }, options));
    const args = chunks
      .flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])
      .map((call) => call.function?.arguments ?? '')
      .join('');
    expect(args).toBe('{"query":"weather in Paris"}');
  });

  const broken: [string, Fault][] = [
    ['a dropped connection', { kind: 'cut', afterChunks: 2 }],
    ['an end without [DONE]', { kind: 'truncate', afterChunks: 3 }],
    ['a malformed event', { kind: 'malformed', afterChunks: 1 }],
  ];
  for (const [name, fault] of broken) {
    it(`errors with upstream_error (accepted) on ${name}, leaving no open upstream`, async () => {
      const { upstream, provider } = setup({ reply: 'a b c d e', faults: [fault] });
      const stream = await provider.chatStream!(streamed, options);
      const error = await caught(readAll(stream));
      expect([error.code, error.accepted]).toEqual(['upstream_error', true]);
      expect(upstream.open).toBe(0);
    });
  }

  it('maps an error event like an error body', async () => {
    const { upstream, provider } = setup({
      faults: [
        { kind: 'error-event', afterChunks: 2, code: 'context_length_exceeded', status: 400 },
        { kind: 'error-event', afterChunks: 1, status: 500 },
      ],
    });
    const first = await caught(readAll(await provider.chatStream!(streamed, options)));
    expect([first.code, first.accepted]).toEqual(['context_length_exceeded', true]);
    const second = await caught(readAll(await provider.chatStream!(streamed, options)));
    expect([second.code, second.accepted]).toEqual(['upstream_error', true]);
    expect(upstream.open).toBe(0);
  });

  it('cancel() aborts the upstream request', async () => {
    const { upstream, provider } = setup({ faults: [{ kind: 'stall', afterChunks: 2 }] });
    const stream = await provider.chatStream!(streamed, options);
    const reader = stream.getReader();
    expect((await reader.read()).value!.choices[0]!.delta.role).toBe('assistant');
    expect(upstream.open).toBe(1);
    await reader.cancel();
    expect(upstream.open).toBe(0);
  });

  it("the caller's abort errors the stream with the abort, not a ProviderError", async () => {
    const { upstream, provider } = setup({ faults: [{ kind: 'stall', afterChunks: 1 }] });
    const controller = new AbortController();
    const stream = await provider.chatStream!(streamed, { ...options, signal: controller.signal });
    const reader = stream.getReader();
    await reader.read();
    controller.abort();
    const error = await reader.read().catch((e: unknown) => e);
    expect((error as DOMException).name).toBe('AbortError');
    expect(upstream.open).toBe(0);
  });

  it('a deadline (AbortSignal.timeout) is upstream_error', async () => {
    const { upstream, provider } = setup({ faults: [{ kind: 'stall', afterChunks: 1 }] });
    const stream = await provider.chatStream!(streamed, { ...options, signal: AbortSignal.timeout(20) });
    const error = await caught(readAll(stream));
    expect([error.code, error.accepted]).toEqual(['upstream_error', true]);
    expect(upstream.open).toBe(0);
  });

  it('a slow reader slows the upstream (backpressure)', async () => {
    const { upstream, provider } = setup({ reply: Array.from({ length: 50 }, (_, i) => `w${i}`).join(' ') });
    const stream = await provider.chatStream!(streamed, options);
    const reader = stream.getReader();
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Nothing was read past what the client asked for: the upstream body is still open.
    expect(upstream.open).toBe(1);
    await reader.cancel();
    expect(upstream.open).toBe(0);
  });
});

describe('openaiCompatible: errors', () => {
  const cases: [Fault, string, boolean, number | undefined][] = [
    [{ kind: 'status', status: 400, code: 'context_length_exceeded' }, 'context_length_exceeded', true, undefined],
    [{ kind: 'status', status: 400, code: 'content_filter' }, 'content_filter', true, undefined],
    [{ kind: 'status', status: 400, code: 'content_policy_violation' }, 'content_filter', true, undefined],
    [{ kind: 'status', status: 400, code: 'moderation_blocked' }, 'content_filter', true, undefined],
    [{ kind: 'status', status: 400, code: 'invalid_value' }, 'invalid_request', true, undefined],
    [{ kind: 'status', status: 422 }, 'invalid_request', true, undefined],
    [{ kind: 'status', status: 413 }, 'request_too_large', true, undefined],
    [{ kind: 'status', status: 401 }, 'upstream_error', true, undefined],
    [{ kind: 'status', status: 403 }, 'upstream_error', true, undefined],
    [{ kind: 'status', status: 404 }, 'upstream_error', true, undefined],
    [{ kind: 'status', status: 429, retryAfter: 7 }, 'upstream_busy', false, 7],
    [{ kind: 'status', status: 429, code: 'insufficient_quota' }, 'upstream_error', false, 1],
    [{ kind: 'status', status: 529, message: 'Overloaded' }, 'upstream_busy', false, undefined],
    [{ kind: 'status', status: 503, message: 'The server is overloaded or not ready yet.' }, 'upstream_busy', false, undefined],
    [{ kind: 'status', status: 503 }, 'upstream_unavailable', false, undefined],
    [{ kind: 'status', status: 503, message: 'Service Unavailable', retryAfter: 3 }, 'upstream_unavailable', false, 3],
    [{ kind: 'status', status: 500 }, 'upstream_error', true, undefined],
    [{ kind: 'status', status: 502, body: '<html>bad gateway</html>' }, 'upstream_error', true, undefined],
    [{ kind: 'refuse' }, 'upstream_unavailable', false, undefined],
  ];
  for (const [fault, code, accepted, retryAfter] of cases) {
    const label = fault.kind === 'status' ? `${fault.status} ${fault.code ?? fault.message ?? ''}` : fault.kind;
    it(`maps ${label} to ${code}`, async () => {
      const { provider } = setup({ faults: () => fault });
      for (const call of [provider.chat!(request, options), provider.chatStream!(streamed, options), provider.chatRaw!(streamed, options)]) {
        const error = await caught(call);
        expect([error.code, error.accepted, error.retryAfter]).toEqual([code, accepted, retryAfter]);
      }
    });
  }

  it('never puts the key or the upstream body in the error', async () => {
    const secretBody = JSON.stringify({
      error: { message: 'leaked sk-secret-key and PRIVATE-PROMPT', type: 'x', param: null, code: 'context_length_exceeded' },
    });
    const { provider } = setup({
      faults: [
        { kind: 'status', status: 400, body: secretBody },
        { kind: 'status', status: 500, body: 'PRIVATE-PROMPT sk-secret-key' },
      ],
    });
    for (const call of [provider.chat!(request, options), provider.chat!(request, options)]) {
      const error = await caught(call);
      const shown = `${error.message} ${String(error)} ${JSON.stringify(error)} ${error.stack}`;
      expect(shown).not.toContain('sk-secret-key');
      expect(shown).not.toContain('PRIVATE-PROMPT');
    }
  });

  it("rethrows the caller's abort before the response", async () => {
    const { provider } = setup({ latencyMs: 5_000 });
    const controller = new AbortController();
    const pending = provider.chat!(request, { ...options, signal: controller.signal });
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect((error as DOMException).name).toBe('AbortError');
  });
});

describe('openaiCompatible: chatRaw', () => {
  const encoder = new TextEncoder();
  function rawUpstream(parts: string[], contentType: string) {
    let open = 0;
    const sent: unknown[] = [];
    const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
      sent.push(JSON.parse(String(init!.body)));
      open++;
      let index = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (index < parts.length) return controller.enqueue(encoder.encode(parts[index++]!));
            open--;
            controller.close();
          },
          cancel() {
            open--;
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { 'content-type': contentType } });
    }) as typeof globalThis.fetch;
    return { fetch, sent, open: () => open };
  }

  it('passes stream bytes through unchanged and reads usage on the side', async () => {
    const usage = { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 };
    const wire = `data: {"id":"x","choices":[{"index":0,"delta":{"content":"hé"}}],"usage":null}\r\n\r\n: comment\n\ndata: {"id":"x","choices":[],"usage":${JSON.stringify(usage)}}\n\ndata: [DONE]\n\n`;
    const bytes = encoder.encode(wire);
    // Split inside the multi-byte é and inside the usage event.
    const parts = [wire.slice(0, 52), wire.slice(52, 120), wire.slice(120)];
    const upstream = rawUpstream(parts, 'text/event-stream');
    const provider = openaiCompatible({ baseURL: 'http://fake/v1', fetch: upstream.fetch });
    const reply = await provider.chatRaw!(streamed, options);
    expect([reply.status, reply.contentType]).toEqual([200, 'text/event-stream']);
    const out = await readAll(reply.body);
    expect(Buffer.concat(out)).toEqual(Buffer.from(bytes));
    expect(await reply.usage).toEqual(usage);
    expect((upstream.sent[0] as { stream_options: unknown }).stream_options).toEqual({ include_usage: true });
    expect(upstream.open()).toBe(0);
  });

  it('reads usage of a whole JSON reply', async () => {
    const wire = JSON.stringify({ id: 'x', object: 'chat.completion', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    const upstream = rawUpstream([wire.slice(0, 10), wire.slice(10)], 'application/json');
    const provider = openaiCompatible({ baseURL: 'http://fake/v1', fetch: upstream.fetch });
    const reply = await provider.chatRaw!(request, options);
    expect(new TextDecoder().decode(Buffer.concat(await readAll(reply.body)))).toBe(wire);
    expect(await reply.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect((upstream.sent[0] as { stream: boolean }).stream).toBe(false);
  });

  it('cancel aborts the upstream and resolves usage with what was seen', async () => {
    const { upstream, provider } = setup({ faults: [{ kind: 'stall', afterChunks: 2 }] });
    const reply = await provider.chatRaw!(streamed, options);
    const reader = reply.body.getReader();
    await reader.read();
    await reader.cancel();
    expect(await reply.usage).toBeUndefined();
    expect(upstream.open).toBe(0);
  });

  it('reads usage from the fake upstream stream', async () => {
    const { upstream, provider } = setup({ reply: 'x y z' });
    const reply = await provider.chatRaw!(streamed, options);
    const text = new TextDecoder().decode(Buffer.concat(await readAll(reply.body)));
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await reply.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 });
    expect(upstream.open).toBe(0);
  });
});

describe('openaiCompatible: attest and settings', () => {
  it('carries attest and zeroDataRetention', async () => {
    let attested = 0;
    const provider = openaiCompatible({ zeroDataRetention: true, attest: async () => void attested++ });
    expect(provider.zeroDataRetention).toBe(true);
    await provider.attest!();
    expect(attested).toBe(1);
  });
});

// Keeps the chunk type honest at compile time.
export type _Chunk = ChatCompletionChunk;
