/**
 * Streams through a real loopback server (`listen(gateway.fetch)`) read by the official `openai`
 * SDK: whole streams, keepalives, the error event (the SDK raises APIError), refusals before the
 * first byte, and clients that abort or break. Real timers, tracked, so after every test the
 * gateway is shown to have cleared them, closed the upstream and freed the slot.
 */
import OpenAI, { APIError, APIUserAbortError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { errorRecord } from '@tollgate/core';
import { listen, type Listening } from '@tollgate/testing/server';
import { setup, type SetupOptions, type TestGateway } from '../test/test-harness';
import { expectNothingLeft, settled } from '../test/test-leaks';
import { trackedTimers } from '../test/test-timers';

const OBFUSCATION = /^[A-Za-z0-9_-]{16,64}$/;
const REPLY = 'Hello! This is the fake upstream speaking.';
const MESSAGES = [{ role: 'user' as const, content: 'Hello there' }];
/** How long the gateway may take to finish its requests: real timers and a loopback server need longer than manual time. */
const SETTLE_MS = 10_000;

interface Served extends TestGateway {
  server: Listening;
  openai: OpenAI;
  time: ReturnType<typeof trackedTimers>;
  /** The requests the server handed to the gateway (their signals abort when the client leaves). */
  received: Request[];
}

const opened: Served[] = [];

/** A gateway on real time behind a loopback server, with an SDK client using the account's key. */
async function serve(options: SetupOptions = {}): Promise<Served> {
  const time = trackedTimers();
  const t = await setup({ now: Date.now, timers: time.timers, ...options });
  const received: Request[] = [];
  const server = await listen((request) => {
    received.push(request);
    return t.gateway.fetch(request);
  });
  const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: t.key, maxRetries: 0, timeout: 10_000 });
  const served: Served = { ...t, server, openai, time, received };
  opened.push(served);
  return served;
}

afterEach(async () => {
  for (const s of opened.splice(0)) {
    try {
      await settled(s, SETTLE_MS);
      await expectNothingLeft(s, s.time);
    } finally {
      await s.server.close();
    }
  }
});

/** Reads an SDK stream to its end, or to the error it raises. */
async function drain(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
    return { chunks, error: undefined };
  } catch (error) {
    return { chunks, error };
  }
}

const textOf = (chunks: OpenAI.Chat.Completions.ChatCompletionChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');

describe('the openai SDK reads every stream', () => {
  it('a whole stream with include_usage: our id and model on every chunk, the usage chunk last', async () => {
    const s = await serve();
    const { data: stream, response } = await s.openai.chat.completions
      .create({ model: 'fast', messages: MESSAGES, stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const { chunks, error } = await drain(stream);
    expect(error).toBeUndefined();
    expect(chunks).toHaveLength(1 + 7 + 1 + 1);
    const id = chunks[0]!.id;
    expect(id).toMatch(/^chatcmpl-/);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id, object: 'chat.completion.chunk', model: 'fast' });
      expect((chunk as unknown as { obfuscation: string }).obfuscation).toMatch(OBFUSCATION);
    }
    const usage = chunks.pop()!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 7 });
    for (const chunk of chunks) expect(chunk.usage).toBeUndefined();
    expect(chunks.map((chunk) => chunk.choices[0]!.finish_reason)).toEqual([...Array(8).fill(null), 'stop']);
    expect(textOf(chunks)).toBe(REPLY);
  });

  it('a stream without include_usage has no usage chunk', async () => {
    const s = await serve();
    const { chunks, error } = await drain(await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }));
    expect(error).toBeUndefined();
    expect(chunks).toHaveLength(1 + 7 + 1);
    expect(chunks.every((chunk) => chunk.choices.length === 1 && chunk.usage === undefined)).toBe(true);
    expect(textOf(chunks)).toBe(REPLY);
  });

  it('a slow drip with keepalive comments between the events, intact and in order', async () => {
    const reply = Array.from({ length: 12 }, (_, i) => `piece${i}`).join(' ');
    const s = await serve({ keepaliveMs: 10, fakeOptions: { reply, faults: () => ({ kind: 'drip', delayMs: 25 }) } });
    // The raw body first, to see that keepalives were sent at all.
    const raw = await fetch(`${s.server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fast', messages: MESSAGES, stream: true }),
    });
    const text = await raw.text();
    expect(text).toContain(': keepalive\n\n');
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const { chunks, error } = await drain(await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }));
    expect(error).toBeUndefined();
    expect(chunks).toHaveLength(1 + 12 + 1);
    expect(textOf(chunks)).toBe(reply);
  });
});

describe('the SDK raises APIError on the error event', () => {
  const cases = [
    ['a dropped upstream', { kind: 'cut', afterChunks: 3 }, 'upstream_error'],
    ['a malformed upstream event', { kind: 'malformed', afterChunks: 3 }, 'upstream_error'],
    ['an upstream error event', { kind: 'error-event', afterChunks: 3 }, 'upstream_error'],
    [
      'an upstream context-length error event',
      { kind: 'error-event', afterChunks: 3, status: 400, code: 'context_length_exceeded' },
      'context_length_exceeded',
    ],
  ] as const;
  for (const [what, fault, code] of cases) {
    it(`after ${what}, with the record's message, type and code, and the request id`, async () => {
      const s = await serve({ fakeOptions: { faults: [fault] } });
      const { data: stream, response } = await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }).withResponse();
      const { chunks, error } = await drain(stream);
      expect(textOf(chunks)).toBe('Hello! This');
      expect(chunks).toHaveLength(3);
      expect(error).toBeInstanceOf(APIError);
      const record = errorRecord(code).error;
      expect(error).toMatchObject({ status: undefined, code, type: record.type, param: null, message: record.message });
      expect((error as APIError).requestID).toBe(response.headers.get('x-request-id'));
      await settled(s, SETTLE_MS);
      expect(s.logs.at(-1)).toMatchObject({ status: 200, code, outcome: 'upstream_failed' });
    });
  }

  it('after the upstream stalled past streamIdleTimeoutMs', async () => {
    const s = await serve({ streamIdleTimeoutMs: 60, fakeOptions: { faults: [{ kind: 'stall', afterChunks: 2 }] } });
    const { chunks, error } = await drain(await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }));
    expect(textOf(chunks)).toBe('Hello!');
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ code: 'upstream_error', type: 'upstream_error' });
  });
});

describe('a refusal before the first byte is a JSON error the SDK raises with its status', () => {
  it('upstream 429: 503 upstream_busy with Retry-After', async () => {
    const s = await serve({ fakeOptions: { faults: [{ kind: 'status', status: 429, retryAfter: 7 }] } });
    const error = await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 503, code: 'upstream_busy', type: 'upstream_error' });
    expect((error as APIError).headers?.get('retry-after')).toBe('7');
    expect((error as APIError).headers?.get('content-type')).toMatch(/^application\/json/);
  });

  it('upstream 500: 502 upstream_error', async () => {
    const s = await serve({ fakeOptions: { faults: [{ kind: 'status', status: 500 }] } });
    const error = await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(await s.balance()).toMatchObject({ balance: 10_000_000, held: 0 });
  });
});

describe('an SDK client that leaves', () => {
  it('controller.abort() after three chunks: upstream aborted, slot freed, delivered text paid', async () => {
    const s = await serve({ fakeOptions: { faults: [{ kind: 'stall', afterChunks: 5 }] } });
    const stream = await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunks.length === 3) stream.controller.abort();
    }
    // The SDK still hands out what it had already read; then the loop ends without an error.
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    expect(chunks.length).toBeLessThanOrEqual(5);
    await settled(s, SETTLE_MS);
    const charge = (await s.store.entries(s.accountId)).find((entry) => entry.kind === 'charge');
    // The gateway had sent all five upstream events before the stall: "Hello! This is the" (four pieces).
    expect(charge!.meta).toMatchObject({ outcome: 'client_gone' });
    expect((charge!.meta as { completion_tokens: number }).completion_tokens).toBeGreaterThan(0);
    expect(s.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone' });
  });

  it('break out of the loop: the SDK aborts, and the gateway cleans up the same way', async () => {
    const s = await serve({ fakeOptions: { faults: [{ kind: 'stall', afterChunks: 4 }] } });
    const stream = await s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true });
    let seen = 0;
    for await (const chunk of stream) {
      expect(chunk.model).toBe('fast');
      if (++seen === 2) break;
    }
    await settled(s, SETTLE_MS);
    expect(s.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone' });
  });

  it('abort while the upstream is still thinking: the stream is cancelled as soon as it starts', async () => {
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const s = await serve({ fakeOptions: { latencyMs: 1, sleep: () => gate } });
    const client = new AbortController();
    const pending = s.openai.chat.completions.create({ model: 'fast', messages: MESSAGES, stream: true }, { signal: client.signal }).catch((e: unknown) => e);
    await expect.poll(() => s.fake.requests.length, { timeout: 5_000 }).toBe(1);
    client.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
    // Once the server saw the disconnect (it aborts the request's signal), the upstream answers.
    await expect.poll(() => s.received[0]?.signal.aborted, { timeout: 5_000 }).toBe(true);
    answer();
    await settled(s, SETTLE_MS);
    expect(s.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone', completionTokens: 0 });
  });
});
