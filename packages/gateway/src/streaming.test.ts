/**
 * The stream lifecycle through `gateway.fetch` (issue 6): the wire shape of every chunk, keepalive,
 * upstream failures after the first event, refusals before it, client disconnects, backpressure
 * and slow upstreams. Time runs on a manual clock with manual timers (the fake's drip included),
 * and after every test no upstream body, timer, in-flight slot or hold may remain.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { errorRecord, type ChatCompletionChunk, type ErrorCode } from '@tollgate/core';
import { estimateCompletionTokens } from '@tollgate/billing';
import { batchesOfReader, type ChatProvider, type ChunkBatches, openaiCompatible } from '@tollgate/providers';
import { chatSseFormat } from './chat-sse-format';
import { createMeteredStream, type StreamFormat, type StreamOutcome } from './metered-stream';
import { testModels, UPSTREAM_KEY, type SetupOptions } from '../test/test-harness';
import { charges, settled } from '../test/test-leaks';
import { stepReader } from '../test/test-sse';
import { closeStreamingGateways, openStreamingGateway, parseEvents, type StreamingGateway } from '../test/streaming-gateway';
import { flush, manualClock, manualTimers, type ManualTimers } from '../test/test-timers';

const OBFUSCATION = /^[A-Za-z0-9_-]{16,64}$/;
/** The fake's default reply, split by the fake into 7 word pieces. */
const REPLY = 'Hello! This is the fake upstream speaking.';
const HUNDRED = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');

/** The upstream body as the provider reads it: every read from the fake is counted and recorded. */
interface Tapped {
  /** Reads the provider made from the fake's body (one per upstream event). */
  reads: number;
  text: string;
}

/** Wraps a fetch so each response body is read through a pull-based counter (adds no buffering). */
function tapFetch(inner: () => typeof globalThis.fetch) {
  const bodies: Tapped[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await inner()(input, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const tapped: Tapped = { reads: 0, text: '' };
    bodies.push(tapped);
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          tapped.reads++;
          tapped.text += decoder.decode(value, { stream: true });
          controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, headers: response.headers });
  }) as typeof globalThis.fetch;
  return { fetch, bodies };
}

/** What a streaming test gets: the harness plus manual time and the tapped upstream bodies. */
interface StreamGateway extends StreamingGateway {
  upstream: Tapped[];
}

/** A gateway on manual time with an inspectable limiter and a tapped upstream; checked for leaks after the test. */
async function open(options: SetupOptions = {}): Promise<StreamGateway> {
  let tap: ReturnType<typeof tapFetch> | undefined;
  const s = await openStreamingGateway((fake) => {
    tap = tapFetch(fake);
    return tap.fetch;
  }, options);
  return Object.assign(s, { upstream: (tap as ReturnType<typeof tapFetch>).bodies });
}

afterEach(closeStreamingGateways);

/** Reads a body eagerly in the background, as a fast client does. */
function collect(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const state = { text: '', closed: false };
  const finished = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        state.closed = true;
        return;
      }
      state.text += decoder.decode(value, { stream: true });
    }
  })();
  return { state, finished, parsed: () => parseEvents(state.text), cancel: () => reader.cancel() };
}

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; delta: { content?: string | null; role?: string }; finish_reason: string | null }[];
  usage?: unknown;
  obfuscation?: string;
}

/** Checks every chunk of a finished stream and returns the content chunks and the usage chunk. */
function expectChunks(data: string[], includeUsage: boolean, upstreamIds: string[]) {
  expect(data.at(-1)).toBe('[DONE]');
  const chunks = data.slice(0, -1).map((payload) => JSON.parse(payload) as Chunk);
  const id = chunks[0]!.id;
  expect(id).toMatch(/^chatcmpl-[A-Za-z0-9]+$/);
  expect(upstreamIds).not.toContain(id);
  for (const chunk of chunks) {
    expect(chunk.id).toBe(id);
    expect(chunk.object).toBe('chat.completion.chunk');
    expect(chunk.model).toBe('fast');
    expect(chunk.obfuscation).toMatch(OBFUSCATION);
    expect(Number.isInteger(chunk.created)).toBe(true);
  }
  const usageChunk = includeUsage ? chunks.pop()! : undefined;
  if (usageChunk) {
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(expect.objectContaining({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) }));
  }
  for (const chunk of chunks) {
    expect('usage' in chunk).toBe(false);
    expect(chunk.choices).toHaveLength(1);
  }
  for (const chunk of chunks.slice(0, -1)) expect(chunk.choices[0]!.finish_reason).toBeNull();
  expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  const text = chunks.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('');
  return { chunks, usageChunk, text };
}

/** The `id`s and the usage chunk the upstream sent in a recorded body. */
function upstreamSent(tapped: Tapped) {
  const payloads = parseEvents(tapped.text)
    .data.filter((payload) => payload !== '[DONE]')
    .map((payload) => JSON.parse(payload) as Chunk);
  return { ids: [...new Set(payloads.map((chunk) => chunk.id))], usage: payloads.find((chunk) => chunk.choices.length === 0)?.usage };
}

describe('every chunk of a stream', () => {
  it('has our id, the request model, obfuscation, no usage, and finish_reason only on the last; the upstream was asked for usage', async () => {
    const s = await open();
    const response = await s.stream();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const { data, comments } = parseEvents(await response.text());
    expect(comments).toEqual([]);
    expect(s.fake.requests[0]!.body.stream).toBe(true);
    expect(s.fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    const sent = upstreamSent(s.upstream[0]!);
    expect(sent.usage).toBeDefined(); // the upstream sent a usage chunk, and it was stripped
    const { chunks, text } = expectChunks(data, false, sent.ids);
    expect(chunks).toHaveLength(1 + 7 + 1); // role, 7 word pieces, the finish chunk
    expect(text).toBe(REPLY);
    expect(new Set(chunks.map((chunk) => chunk.obfuscation)).size).toBeGreaterThan(1);
  });

  it('adds the usage chunk, as the upstream reported it, just before [DONE] when include_usage is true', async () => {
    const s = await open();
    const response = await s.stream({ stream_options: { include_usage: true } });
    const { data } = parseEvents(await response.text());
    const sent = upstreamSent(s.upstream[0]!);
    const { usageChunk, text } = expectChunks(data, true, sent.ids);
    // The spec's Usage fields, as the upstream reported them (vendor extras such as audio_tokens dropped).
    const reported = sent.usage as {
      prompt_tokens: number;
      completion_tokens: number;
      total_tokens: number;
      prompt_tokens_details: { cached_tokens: number };
      completion_tokens_details: { reasoning_tokens: number };
    };
    expect(usageChunk!.usage).toEqual({
      prompt_tokens: reported.prompt_tokens,
      completion_tokens: reported.completion_tokens,
      total_tokens: reported.total_tokens,
      prompt_tokens_details: { cached_tokens: reported.prompt_tokens_details.cached_tokens },
      completion_tokens_details: { reasoning_tokens: reported.completion_tokens_details.reasoning_tokens },
      // And the charge (docs/http-api.md, Billing): 1 micro a prompt token, 2 a completion token.
      cost_micros: reported.prompt_tokens + 2 * reported.completion_tokens,
    });
    expect(text).toBe(REPLY);
    await settled(s);
    // The account pays the reported usage: 1 micro per prompt token, 2 per completion token.
    const usage = sent.usage as { prompt_tokens: number; completion_tokens: number };
    expect(await s.balance()).toMatchObject({ balance: 10_000_000 - usage.prompt_tokens - 2 * usage.completion_tokens, held: 0 });
  });

  it('asks for usage upstream also when the client says include_usage: false, and sends no usage chunk', async () => {
    const s = await open();
    const response = await s.stream({ stream_options: { include_usage: false } });
    const { data } = parseEvents(await response.text());
    expect(s.fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expectChunks(data, false, upstreamSent(s.upstream[0]!).ids);
  });
});

describe('keepalive', () => {
  it('sends `: keepalive` after 25 s without an event, again every 25 s, and fails a stall at streamIdleTimeoutMs', async () => {
    const s = await open({ fakeOptions: { faults: [{ kind: 'stall', afterChunks: 3 }] } });
    const body = collect(await s.stream());
    await flush();
    expect(body.parsed().data).toHaveLength(3);
    await s.time.advance(24_999);
    expect(body.parsed().comments).toEqual([]);
    await s.time.advance(1);
    expect(body.parsed().comments).toEqual([': keepalive']);
    expect(body.state.text.endsWith(': keepalive\n\n')).toBe(true);
    await s.time.advance(25_000);
    expect(body.parsed().comments).toEqual([': keepalive', ': keepalive']);
    // The default idle timeout is 5 minutes of upstream silence: then one error event, no [DONE].
    await s.time.advance(300_000 - 50_001);
    expect(body.state.closed).toBe(false);
    await s.time.advance(1);
    await body.finished;
    const { data, comments } = body.parsed();
    expect(comments).toHaveLength(11); // at 25, 50, ... 275 s
    expect(data).toHaveLength(4);
    expect(JSON.parse(data[3]!)).toEqual(errorRecord('upstream_error'));
  });

  it('follows the keepaliveMs option and is not sent while events keep flowing', async () => {
    // One event every 500 ms against a 1,000 ms keepalive: never quiet long enough (the clock moves
    // in 250 ms steps, so a lagging step still leaves room).
    const s = await open({ keepaliveMs: 1_000, fakeOptions: { faults: [{ kind: 'drip', delayMs: 500 }] } });
    const body = collect(await answered(s, s.stream(), 250));
    for (let i = 0; i < 60 && !body.state.closed; i++) await s.time.advance(250);
    await body.finished;
    const { data, comments } = body.parsed();
    expect(comments).toEqual([]);
    expect(data).toHaveLength(1 + 7 + 1 + 1);
    expect(data.at(-1)).toBe('[DONE]');

    // The same option on a quiet stream: a keepalive every 1,000 ms.
    s.fake.setFaults([{ kind: 'stall', afterChunks: 1 }]);
    const quiet = collect(await s.stream());
    await flush();
    await s.time.advance(999);
    expect(quiet.parsed().comments).toEqual([]);
    await s.time.advance(1);
    expect(quiet.parsed().comments).toEqual([': keepalive']);
    await s.time.advance(2_000);
    expect(quiet.parsed().comments).toEqual([': keepalive', ': keepalive', ': keepalive']);
    await quiet.cancel();
  });
});

/** Runs a stream whose upstream fails after three events and returns what the client got. */
async function failedStream(s: StreamGateway, finish?: () => Promise<void>) {
  const body = collect(await s.stream());
  await flush();
  if (finish) await finish();
  await body.finished;
  await settled(s);
  return body.parsed();
}

describe('an upstream that fails after the first event', () => {
  const cases: [string, Parameters<typeof open>[0], ErrorCode][] = [
    ['drops the connection', { fakeOptions: { faults: [{ kind: 'cut', afterChunks: 3 }] } }, 'upstream_error'],
    ['sends a malformed event', { fakeOptions: { faults: [{ kind: 'malformed', afterChunks: 3 }] } }, 'upstream_error'],
    // 64 Mi characters of one line, then the parser's bound (packages/sse/src/create-sse-parser.ts).
    ['never ends its next event', { fakeOptions: { faults: [{ kind: 'flood', afterChunks: 3 }] } }, 'upstream_error'],
    ['sends an error event', { fakeOptions: { faults: [{ kind: 'error-event', afterChunks: 3 }] } }, 'upstream_error'],
    [
      'sends a context-length error event',
      { fakeOptions: { faults: [{ kind: 'error-event', afterChunks: 3, status: 400, code: 'context_length_exceeded' }] } },
      'context_length_exceeded',
    ],
    ['ends without [DONE]', { fakeOptions: { faults: [{ kind: 'truncate', afterChunks: 3 }] } }, 'upstream_error'],
  ];
  for (const [what, options, code] of cases) {
    it(`${what}: one error event with the mapped record, no [DONE], billed for the two delivered pieces`, async () => {
      const s = await open(options);
      const { data, comments } = await failedStream(s);
      expect(comments).toEqual([]);
      expect(data).toHaveLength(4);
      expect(data).not.toContain('[DONE]');
      expect(JSON.parse(data[3]!)).toEqual(errorRecord(code));
      const delivered = data
        .slice(0, 3)
        .map((payload) => (JSON.parse(payload) as Chunk).choices[0]!.delta.content ?? '')
        .join('');
      expect(delivered).toBe('Hello! This');
      const [charge] = await charges(s);
      expect(charge!.meta).toMatchObject({ completion_tokens: estimateCompletionTokens('Hello! This'), outcome: 'upstream_failed' });
      const meta = charge!.meta as { prompt_tokens: number; completion_tokens: number };
      expect(charge!.micros).toBe(-(meta.prompt_tokens + 2 * meta.completion_tokens));
      expect(s.logs.at(-1)).toMatchObject({ status: 200, stream: true, code, outcome: 'upstream_failed' });
    });
  }

  it('stalls past streamIdleTimeoutMs: one error event at exactly that time, the upstream aborted', async () => {
    const s = await open({ streamIdleTimeoutMs: 60_000, fakeOptions: { faults: [{ kind: 'stall', afterChunks: 3 }] } });
    const { data, comments } = await failedStream(s, async () => {
      await s.time.advance(59_999);
      expect(s.fake.open).toBe(1);
      await s.time.advance(1);
    });
    expect(comments).toEqual([': keepalive', ': keepalive']);
    expect(data).toHaveLength(4);
    expect(JSON.parse(data[3]!)).toEqual(errorRecord('upstream_error'));
    expect((await charges(s))[0]!.meta).toMatchObject({ completion_tokens: estimateCompletionTokens('Hello! This'), outcome: 'upstream_failed' });
  });

  it('counts the stall from the last upstream event, not from the start of the stream', async () => {
    const s = await open({ streamIdleTimeoutMs: 60_000, fakeOptions: { faults: [{ kind: 'drip', delayMs: 40_000 }] } });
    const body = collect(await answered(s, s.stream(), 5_000));
    // Ten events 40 s apart: 400 s in all, never 60 s of silence. The clock moves in 5 s steps, so
    // a step that ends before the next event is armed costs at most 5 s of slack, not 40.
    for (let i = 0; i < 100 && !body.state.closed; i++) await s.time.advance(5_000);
    await body.finished;
    const { data } = body.parsed();
    expect(data.at(-1)).toBe('[DONE]');
    expect(data).toHaveLength(10);
  });
});

describe('the idle timeout blames only the side the stream waits on', () => {
  it('counts an upstream stall from the moment the client asked for more, not from the last event', async () => {
    const s = await open({ streamIdleTimeoutMs: 60_000, fakeOptions: { faults: [{ kind: 'stall', afterChunks: 3 }] } });
    const reader = stepReader(await s.stream());
    await reader.take(3);
    // The client pauses for 50 s (the upstream is not read meanwhile), then asks for more: the stall starts now.
    await s.time.advance(50_000);
    let next: string[] | undefined;
    const pending = reader.take(1).then((data) => (next = data));
    await flush();
    expect(reader.comments).toEqual([': keepalive', ': keepalive']);
    await s.time.advance(59_999);
    expect(next).toBeUndefined();
    await s.time.advance(1);
    await pending;
    expect(JSON.parse(next![0]!)).toEqual(errorRecord('upstream_error'));
    await settled(s);
    expect(s.logs.at(-1)).toMatchObject({ status: 200, code: 'upstream_error', outcome: 'upstream_failed' });
  });

  it('lets a client go that read nothing for streamIdleTimeoutMs: no error event blaming the provider, no [DONE]', async () => {
    const s = await open({ streamIdleTimeoutMs: 60_000, fakeOptions: { reply: HUNDRED } });
    const response = await s.stream();
    const reader = stepReader(response);
    const got = await reader.take(3);
    await s.time.advance(59_999);
    expect(s.fake.open).toBe(1);
    await s.time.advance(1);
    // Upstream aborted and slot freed while the client still has not read.
    await settled(s);
    expect(s.fake.open).toBe(0);
    expect(await s.inFlight()).toBe(0);
    expect(s.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone' });
    expect(s.logs.at(-1)!.code).toBeUndefined();
    const delivered = got.map((payload) => (JSON.parse(payload) as Chunk).choices[0]!.delta.content ?? '').join('');
    expect((await charges(s))[0]!.meta).toMatchObject({ completion_tokens: estimateCompletionTokens(delivered), outcome: 'client_gone' });
    // What the client finds when it reads again: the keepalives sent meanwhile, then the end.
    await expect(reader.take(1)).rejects.toThrow('the stream ended after 0 of 1 events');
    expect(reader.comments).toEqual([': keepalive', ': keepalive']);
  });
});

describe('an upstream that refuses before the first byte', () => {
  // [upstream status, its Retry-After, its message, our status, our code, our Retry-After]
  const cases: [number, number | undefined, string | undefined, number, ErrorCode, string | null][] = [
    [500, undefined, undefined, 502, 'upstream_error', null],
    [502, undefined, undefined, 502, 'upstream_error', null],
    [503, 9, undefined, 502, 'upstream_unavailable', '9'],
    [503, 4, 'The engine is currently overloaded, please try again later.', 503, 'upstream_busy', '4'],
    [429, 7, undefined, 503, 'upstream_busy', '7'],
  ];
  for (const [status, retryAfter, message, ours, code, header] of cases) {
    it(`answers upstream ${status}${message ? ' overloaded' : ''} with a JSON ${ours} ${code}, not a stream, and holds nothing`, async () => {
      const fault = { kind: 'status' as const, status, ...(retryAfter ? { retryAfter } : {}), ...(message ? { message } : {}) };
      const s = await open({ fakeOptions: { faults: [fault] } });
      const response = await s.stream();
      expect(response.status).toBe(ours);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('retry-after')).toBe(header);
      expect(await response.json()).toEqual(errorRecord(code));
      expect(await charges(s)).toEqual([]);
      expect(await s.balance()).toMatchObject({ balance: 10_000_000, held: 0 });
    });
  }
});

describe('a client that disconnects', () => {
  it('after three events: the upstream is aborted, the slot freed, and the delivered text paid', async () => {
    const s = await open({ fakeOptions: { reply: HUNDRED } });
    const reader = stepReader(await s.stream());
    const got = await reader.take(3);
    expect(s.fake.open).toBe(1);
    expect(await s.inFlight()).toBe(1);
    expect(s.gateway.active).toBe(1);
    await reader.cancel();
    await settled(s);
    expect(s.fake.open).toBe(0);
    expect(await s.inFlight()).toBe(0);
    // The fake was asked for fewer than ten of its 103 events.
    expect(s.upstream[0]!.reads).toBeLessThan(10);
    const delivered = got.map((payload) => (JSON.parse(payload) as Chunk).choices[0]!.delta.content ?? '').join('');
    expect(delivered).toBe('w0 w1');
    const [charge] = await charges(s);
    expect(charge!.meta).toMatchObject({ completion_tokens: estimateCompletionTokens('w0 w1'), outcome: 'client_gone' });
    expect(s.logs.at(-1)).toMatchObject({ status: 200, outcome: 'client_gone' });
  });

  it('before reading anything: nothing delivered, nothing left behind', async () => {
    const s = await open();
    const response = await s.stream();
    await response.body!.cancel();
    await settled(s);
    const [charge] = await charges(s);
    expect(charge!.meta).toMatchObject({ completion_tokens: 0, outcome: 'client_gone' });
  });

  it('while the upstream is stalled: the pending upstream read is aborted', async () => {
    const s = await open({ fakeOptions: { faults: [{ kind: 'stall', afterChunks: 2 }] } });
    const reader = stepReader(await s.stream());
    await reader.take(2);
    const next = reader.take(1).catch((error: unknown) => error);
    await flush();
    expect(s.fake.open).toBe(1);
    await reader.cancel();
    expect(await next).toBeInstanceOf(Error);
  });

  it('during a keepalive wait: the keepalive and idle timers are cleared', async () => {
    const s = await open({ fakeOptions: { faults: [{ kind: 'stall', afterChunks: 1 }] } });
    const body = collect(await s.stream());
    await s.time.advance(25_000);
    expect(body.parsed().comments).toEqual([': keepalive']);
    expect(s.time.pending).toBeGreaterThan(0);
    await body.cancel();
  });
});

describe('backpressure', () => {
  it('reads the upstream only as fast as the client reads', async () => {
    const s = await open({ fakeOptions: { reply: HUNDRED } });
    const reader = stepReader(await s.stream());
    await reader.take(3);
    await flush();
    const afterThree = s.upstream[0]!.reads;
    // Three events were read; the decoder pipe may hold a couple more, never the rest of the 103.
    expect(afterThree).toBeGreaterThanOrEqual(3);
    expect(afterThree).toBeLessThanOrEqual(6);
    await s.time.advance(1_000);
    expect(s.upstream[0]!.reads).toBe(afterThree);
    await reader.take(10);
    await flush();
    expect(s.upstream[0]!.reads).toBeLessThanOrEqual(afterThree + 10);
    const rest = await reader.take(100 - 12 + 1 + 1); // w12..w99, the finish chunk, [DONE]
    expect(rest.at(-1)).toBe('[DONE]');
    expect(s.upstream[0]!.reads).toBe(1 + 100 + 1 + 1 + 1); // role, 100 words, finish, usage, [DONE]
  });
});

describe('a slow upstream', () => {
  it('drips 100 pieces: every chunk arrives whole and in order', async () => {
    const s = await open({ fakeOptions: { reply: HUNDRED, faults: [{ kind: 'drip', delayMs: 3_000 }] } });
    const body = collect(await answered(s, s.stream({ stream_options: { include_usage: true } }), 3_000));
    for (let i = 0; i < 110 && !body.state.closed; i++) await s.time.advance(3_000);
    await body.finished;
    const { data, comments } = body.parsed();
    expect(comments).toEqual([]);
    const { text } = expectChunks(data, true, upstreamSent(s.upstream[0]!).ids);
    expect(text).toBe(HUNDRED);
  });
});

describe('createChatStream over an upstream that reports no usage', () => {
  const chunk = (content: string | undefined, finish: 'stop' | null = null): ChatCompletionChunk =>
    ({
      id: 'up-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'up-model',
      choices: [{ index: 0, delta: content === undefined ? {} : { content }, finish_reason: finish }],
    }) as ChatCompletionChunk;
  const run = async (includeUsage: boolean, usageFallback?: (text: string) => { prompt_tokens: number; completion_tokens: number; total_tokens: number }) => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const chunks = [chunk('Hi'), chunk(' you'), chunk(undefined, 'stop')];
    const ends: { outcome: StreamOutcome; usage: unknown; deliveredText: string }[] = [];
    const format = chatSseFormat({
      id: 'chatcmpl-ours',
      model: 'fast',
      includeUsage,
      obfuscate: () => 'x'.repeat(16),
      now: clock.now,
      ...(usageFallback ? { usageFallback } : {}),
    });
    const source = new ReadableStream<ChatCompletionChunk>({ pull: (c) => (chunks.length ? c.enqueue(chunks.shift()!) : c.close()) }, { highWaterMark: 0 });
    const { body } = createMeteredStream({
      upstream: { batches: batchesOfReader(source.getReader()) },
      format,
      abort: new AbortController(),
      settle: async (end) => void ends.push({ ...end, usage: format.usage, deliveredText: format.delivered }),
      ...steadyStream(clock, time),
    });
    const { data } = parseEvents(await new Response(body).text());
    await flush();
    expect(time.pending).toBe(0);
    expect(ends).toEqual([{ outcome: 'done', usage: undefined, deliveredText: 'Hi you' }]);
    return data;
  };

  it('shows the fallback (the estimate charged) as the usage chunk when the client asked for usage', async () => {
    const data = await run(true, (text) => ({ prompt_tokens: 5, completion_tokens: text.length, total_tokens: 5 + text.length }));
    expect(data).toHaveLength(5);
    expect(JSON.parse(data[3]!)).toEqual({
      id: 'chatcmpl-ours',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'fast',
      choices: [],
      usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 },
      obfuscation: 'x'.repeat(16),
    });
    expect(data[4]).toBe('[DONE]');
  });

  it('sends no usage chunk when the client did not ask, fallback or not', async () => {
    let asked = 0;
    const data = await run(false, () => {
      asked++;
      return { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    });
    expect(data.map((payload) => payload === '[DONE]' || (JSON.parse(payload) as Chunk).choices.length === 1)).toEqual([true, true, true, true]);
    expect(asked).toBe(0);
  });
});

describe('a chat provider with only chatStream (no chatBatches)', () => {
  /** A gateway whose provider is an embedder's: chat and chatStream only, over the fake upstream; counts chatStream calls. */
  const streamOnly = async (options: SetupOptions = {}) => {
    let harness: StreamGateway | undefined;
    const tap = tapFetch(() => harness!.fake.fetch);
    const full = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: tap.fetch });
    const seen = { streams: 0 };
    const provider: ChatProvider = {
      kind: 'stream-only',
      zeroDataRetention: false,
      chat: (request, call) => full.chat(request, call),
      chatStream: (request, call) => {
        seen.streams++;
        return full.chatStream(request, call);
      },
    };
    expect(full.chatBatches).toBeTypeOf('function');
    expect('chatBatches' in provider).toBe(false);
    harness = await open({ ...options, models: testModels().filter((model) => model.type === 'chat'), providers: { local: provider } });
    return { s: harness, seen, upstream: tap.bodies };
  };

  it('streams every chunk, the usage chunk and [DONE] through the stream’s reader, and charges the reported usage', async () => {
    const { s, seen, upstream } = await streamOnly();
    const response = await s.stream({ stream_options: { include_usage: true } });
    expect(response.status).toBe(200);
    const { data, comments } = parseEvents(await response.text());
    expect(comments).toEqual([]);
    const sent = upstreamSent(upstream[0]!);
    const { chunks, usageChunk, text } = expectChunks(data, true, sent.ids);
    expect(chunks).toHaveLength(1 + 7 + 1);
    expect(text).toBe(REPLY);
    expect(seen.streams).toBe(1);
    await settled(s);
    const reported = sent.usage as { prompt_tokens: number; completion_tokens: number };
    const cost = reported.prompt_tokens + 2 * reported.completion_tokens;
    expect(usageChunk!.usage).toMatchObject({ prompt_tokens: reported.prompt_tokens, completion_tokens: reported.completion_tokens, cost_micros: cost });
    expect(await s.balance()).toMatchObject({ balance: 10_000_000 - cost, held: 0 });
    expect((await charges(s))[0]!.meta).toMatchObject({ outcome: 'done' });
  });

  it('an upstream that drops the connection after three events: one error event, billed for what was delivered', async () => {
    const { s, seen } = await streamOnly({ fakeOptions: { faults: [{ kind: 'cut', afterChunks: 3 }] } });
    const { data } = await failedStream(s);
    expect(data).toHaveLength(4);
    expect(JSON.parse(data[3]!)).toEqual(errorRecord('upstream_error'));
    expect(seen.streams).toBe(1);
    expect((await charges(s))[0]!.meta).toMatchObject({ completion_tokens: estimateCompletionTokens('Hello! This'), outcome: 'upstream_failed' });
  });
});

describe('a wrapper that replaces an adapter’s chatStream (spreading the adapter, its chatBatches too)', () => {
  it('is read through its own chatStream: the client gets and pays for the chunks as the wrapper edited them, not the upstream’s text', async () => {
    let harness: StreamGateway | undefined;
    const tap = tapFetch(() => harness!.fake.fetch);
    const adapter = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: tap.fetch });
    const shout = new TransformStream<ChatCompletionChunk, ChatCompletionChunk>({
      transform(chunk, controller) {
        // Edited in place, as a redaction wrapper might.
        for (const choice of chunk.choices) if (typeof choice.delta?.content === 'string') choice.delta.content = choice.delta.content.toUpperCase();
        controller.enqueue(chunk);
      },
    });
    const wrapped: ChatProvider = { ...adapter, chatStream: async (request, call) => (await adapter.chatStream(request, call)).pipeThrough(shout) };
    expect(wrapped.chatBatches).toBeTypeOf('function');
    harness = await open({ models: testModels().filter((model) => model.type === 'chat'), providers: { local: wrapped } });
    const response = await harness.stream({ stream_options: { include_usage: true } });
    const { data } = parseEvents(await response.text());
    const { text } = expectChunks(data, true, upstreamSent(tap.bodies[0]!).ids);
    expect(text).toBe(REPLY.toUpperCase());
    await settled(harness);
    expect(await charges(harness)).toHaveLength(1);
  });
});

describe('an upstream read whose batch the format fails on', () => {
  it('text, its usage and then a chunk with a null choice in one read: the client gets only the error event and pays nothing, as a 502', async () => {
    const chunk = (fields: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: 'up-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'up', ...fields })}\n\n`;
    const text = [
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] }),
      chunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
      // A choice no provider should send: the adapter passes it on (choices is a list), the format throws on it.
      chunk({ choices: [null] }),
      'data: [DONE]\n\n',
    ].join('');
    // The whole reply in one body chunk: one upstream read, one batch.
    const reply = async () =>
      new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(text));
            controller.close();
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: reply });
    const s = await open({ models: testModels().filter((model) => model.type === 'chat'), providers: { local: provider } });
    const response = await s.stream({ stream_options: { include_usage: true } });
    expect(response.status).toBe(200);
    const { data } = parseEvents(await response.text());
    expect(data.map((payload) => JSON.parse(payload))).toEqual([errorRecord('upstream_error')]);
    await settled(s);
    expect(await charges(s)).toEqual([]);
    expect(await s.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
  });
});

/** What createMeteredStream takes besides its upstream, format and settlement, for a client that stays and deadlines far off (on a manual clock). */
function steadyStream(clock: ReturnType<typeof manualClock>, time: ManualTimers) {
  return {
    signal: new AbortController().signal,
    releaseSlot: () => undefined,
    report: (error: unknown) => {
      throw error;
    },
    keepaliveMs: 25_000,
    idleTimeoutMs: 60_000,
    headersTimeoutMs: 60_000,
    startedAt: clock.now(),
    timers: time.timers,
    now: clock.now,
  };
}

describe('createMeteredStream over a batch of several items', () => {
  const encoder = new TextEncoder();
  /** One batch of the given items, then the end; records cancels. */
  const oneBatch = <T>(items: T[]) => {
    const seen = { reads: 0, cancelled: false };
    const batches: ChunkBatches<T> = {
      read: async () => (seen.reads++ === 0 ? items : undefined),
      cancel: async () => {
        seen.cancelled = true;
      },
    };
    return { batches, seen };
  };
  /** A metered stream over `batches` with `format`: the client's body chunks as text, how it settled, and what else was seen. */
  const run = async <T>(batches: ChunkBatches<T>, format: StreamFormat<T>) => {
    const clock = manualClock();
    const time = manualTimers(clock);
    const ends: { outcome: StreamOutcome; code?: ErrorCode }[] = [];
    const abort = new AbortController();
    let delivered = 0;
    const { body, finished } = createMeteredStream({
      upstream: { batches },
      format,
      abort,
      settle: async (end) => void ends.push(end),
      onDelivered: () => void delivered++,
      ...steadyStream(clock, time),
    });
    const chunks: string[] = [];
    const decoder = new TextDecoder();
    const reader = body.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(decoder.decode(read.value));
    await finished;
    expect(time.pending).toBe(0);
    return { chunks, ends, aborted: abort.signal.aborted, delivered };
  };

  it('a format without items: an item that throws mid-batch sends the items before it, then the error event; upstream_failed', async () => {
    const items: string[] = [];
    const format: StreamFormat<string> = {
      item(value) {
        items.push(value);
        if (value === 'bad') throw new TypeError('an item no provider should send');
        return encoder.encode(`<${value}>`);
      },
      done: () => encoder.encode('<done>'),
      errorEvent: (code) => encoder.encode(`<error ${code}>`),
    };
    const { batches, seen } = oneBatch(['a', 'b', 'bad', 'd', 'e']);
    const { chunks, ends, aborted, delivered } = await run(batches, format);
    // The two items joined in one chunk, then the error event; nothing after the item that threw.
    expect(chunks).toEqual(['<a><b>', '<error upstream_error>']);
    expect(items).toEqual(['a', 'b', 'bad']);
    expect(delivered).toBe(1);
    expect(ends).toEqual([{ outcome: 'upstream_failed', code: 'upstream_error' }]);
    expect(seen.cancelled).toBe(true);
    expect(aborted).toBe(true);
  });

  it('a format without items: a whole batch goes out as one chunk of its items joined, then done', async () => {
    const format: StreamFormat<string> = {
      item: (value) => (value === 'skip' ? undefined : encoder.encode(`<${value}>`)),
      done: () => encoder.encode('<done>'),
      errorEvent: (code) => encoder.encode(`<error ${code}>`),
    };
    const { batches, seen } = oneBatch(['a', 'skip', 'b', 'c']);
    const { chunks, ends, aborted } = await run(batches, format);
    expect(chunks).toEqual(['<a><b><c>', '<done>']);
    expect(ends).toEqual([{ outcome: 'done' }]);
    expect(seen.cancelled).toBe(false);
    expect(aborted).toBe(false);
  });

  it('chatSseFormat (with items): a batch with a chunk that throws sends none of it, only the error event, and none of it counts as delivered', async () => {
    const content = (text: string): ChatCompletionChunk => ({
      id: 'up-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'up-model',
      choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
    });
    // A choice that is null: no provider should send it, and the format throws on it.
    const broken = { ...content('x'), choices: [null] } as unknown as ChatCompletionChunk;
    const format = chatSseFormat({ id: 'chatcmpl-ours', model: 'fast', includeUsage: false, obfuscate: () => 'x'.repeat(16), now: () => 0 });
    const { chunks, ends } = await run(oneBatch([content('Hi'), content(' you'), broken, content('!')]).batches, format);
    expect(chunks).toEqual([new TextDecoder().decode(format.errorEvent!('upstream_error'))]);
    expect(ends).toEqual([{ outcome: 'upstream_failed', code: 'upstream_error' }]);
    expect(format.delivered).toBe('');
  });
});

/**
 * The gateway answers a stream once the first upstream event arrived (or a keepalive interval
 * passed); on the manual clock that takes the test moving time, as a real clock would.
 * Time moves only once the request reached the upstream: before that the gateway hashes the key
 * on the thread pool, which takes real time, and moving the manual clock meanwhile would fire the
 * body-read deadline (408) on a busy machine.
 */
async function answered(s: StreamGateway, request: Promise<Response>, stepMs: number): Promise<Response> {
  const before = s.fake.requests.length;
  let response: Response | undefined;
  void request.then(
    (answer) => (response = answer),
    () => {},
  );
  const deadline = Date.now() + 5_000;
  while (response === undefined && s.fake.requests.length === before && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
  expect(response !== undefined || s.fake.requests.length > before).toBe(true);
  for (let i = 0; i < 100 && response === undefined; i++) {
    await s.time.advance(stepMs);
    await flush();
  }
  return response ?? request;
}
