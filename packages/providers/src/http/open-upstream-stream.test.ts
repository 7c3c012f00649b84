import { describe, expect, it } from 'vitest';
import { type ChatProvider, ProviderError } from '../provider';
import { pieceBody } from '../../test/piece-body';
import { chatStreamOf, pairedChatBatches, streamOfBatches } from './chunk-batches';
import { type ChunkSink, type ClosingChunkSink, openUpstreamStream as openBatches, type SseSteps, sseChunkBatches } from './open-upstream-stream';

/** The batches as the stream a provider's `chatStream` returns. */
const openUpstreamStream = async (...args: Parameters<typeof openBatches<string>>) => streamOfBatches(await openBatches(...args));

/** A body over the given pieces, recording pulls and cancels. */
function body(pieces: (string | Error)[]) {
  const piece = pieceBody(pieces);
  return { response: new Response(piece.body), seen: piece.seen };
}

/** Each event's data as a chunk; `two` makes two chunks, `fail` errors after its chunk, `bad` throws; the end needs `end`. */
function steps(): SseSteps<string> {
  let ended = false;
  return {
    transform(event, sink: ChunkSink<string>) {
      if (event.data === 'end') ended = true;
      else if (event.data === 'two') {
        sink.enqueue('two-a');
        sink.enqueue('two-b');
      } else if (event.data === 'fail') {
        sink.enqueue('dropped');
        sink.error(new ProviderError('content_filter', { accepted: true }));
      } else if (event.data === 'bad') throw new TypeError('bug');
      else sink.enqueue(event.data);
    },
    flush(sink) {
      if (!ended) sink.error(new ProviderError('upstream_error', { accepted: true }));
      else sink.enqueue('last');
    },
  };
}

async function drain(stream: ReadableStream<string>): Promise<{ chunks: string[]; error?: unknown }> {
  const chunks: string[] = [];
  const reader = stream.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks };
}

describe('openUpstreamStream', () => {
  it('delivers the chunks of every event read, the flush, and the chunks before an error before the error itself', async () => {
    const whole = body(['data: a\n\ndata: two\n\ndata: b', '\n\ndata: end\n\n']);
    expect(await drain(await openUpstreamStream(undefined, async () => whole.response, steps()))).toEqual({ chunks: ['a', 'two-a', 'two-b', 'b', 'last'] });
    const failing = body(['data: a\n\ndata: fail\n\ndata: c\n\n']);
    const result = await drain(await openUpstreamStream(undefined, async () => failing.response, steps()));
    expect(result.chunks).toEqual(['a']);
    expect((result.error as ProviderError).code).toBe('content_filter');
    expect(failing.seen.cancelled).toBe(true);
  });

  it('a throwing step and a failed or short body are upstream_error; the caller abort stays the abort', async () => {
    for (const pieces of [['data: a\n\ndata: bad\n\n'], ['data: a\n\n', new Error('socket hang up')], ['data: a\n\n']]) {
      const result = await drain(await openUpstreamStream(undefined, async () => body(pieces).response, steps()));
      expect(result.chunks).toEqual(['a']);
      expect((result.error as ProviderError).code).toBe('upstream_error');
    }
    const controller = new AbortController();
    const reason = new Error('client left');
    controller.abort(reason);
    // A fetch errors the body of an aborted call with the signal's reason.
    const aborted = body([reason]);
    expect((await drain(await openUpstreamStream(controller.signal, async () => aborted.response, steps()))).error).toBe(reason);
  });

  it('reads the body only as the consumer pulls; cancel cancels the body and aborts a call it owns', async () => {
    const slow = await openPieces(['data: a\n\n', 'data: b\n\n', 'data: end\n\n']);
    const reader = streamOfBatches(slow.batches).getReader();
    expect((await reader.read()).value).toBe('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(slow.seen.pulls).toBe(1);
    await reader.cancel();
    expect(slow.seen.cancelled).toBe(true);
    expect(slow.aborted()).toBe(true);
  });
});

/** Opens the batches over `pieces`, keeping the body's record and the signal the call ran under. */
async function openPieces(pieces: (string | Error)[]) {
  const piece = body(pieces);
  let signal: AbortSignal | undefined;
  const batches = await openBatches(
    undefined,
    async (given) => {
      signal = given;
      return piece.response;
    },
    steps(),
  );
  return { batches, seen: piece.seen, aborted: () => signal?.aborted };
}

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.unreachable(`resolved with ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

/** An upstream link that records what was asked of it. */
function recordingLink() {
  const calls = { abort: 0, unlink: 0 };
  return { calls, link: { abort: () => void calls.abort++, unlink: () => void calls.unlink++ } };
}

/** Each event's data as a chunk; `done` closes the sink (as OpenAI's `[DONE]`), `both` enqueues then closes. */
function closingSteps(): SseSteps<string, ClosingChunkSink<string>> {
  return {
    transform(event, sink) {
      if (event.data === 'done') sink.close();
      else if (event.data === 'both') {
        sink.enqueue('both');
        sink.close();
      } else sink.enqueue(event.data);
    },
    flush(sink) {
      sink.error(new ProviderError('upstream_error', { accepted: true }));
    },
  };
}

const passErrors = { step: (reason: unknown) => reason, read: (error: unknown) => error };

describe('sseChunkBatches (openUpstreamStream’s batches)', () => {
  it('answers every chunk of one body read as one batch, and the next body read as the next batch', async () => {
    const { batches, seen } = await openPieces(['data: a\n\ndata: two\n\ndata: b\n\n', 'data: c\n\ndata: end\n\n']);
    expect(await batches.read()).toEqual(['a', 'two-a', 'two-b', 'b']);
    expect(seen.pulls).toBe(1);
    expect(await batches.read()).toEqual(['c']);
    expect(seen.pulls).toBe(2);
    expect(await batches.read()).toEqual(['last']);
    expect(await batches.read()).toBeUndefined();
    expect(await batches.read()).toBeUndefined();
    // Read to its end: nothing to cancel.
    expect(seen.cancelled).toBe(false);
  });

  it('an event split across body reads goes out with the read that completes it; a read never answers an empty batch', async () => {
    const { batches, seen } = await openPieces(['data: a\n\ndata: b', '\n\ndata: c\n\n', ': keepalive\n\ndata: end\n\n', 'data: d\n\n', 'data: end\n\n']);
    expect(await batches.read()).toEqual(['a']);
    expect(await batches.read()).toEqual(['b', 'c']);
    // The third body read gave no chunk: the same batch read reads on.
    expect(await batches.read()).toEqual(['d']);
    expect(seen.pulls).toBe(4);
  });

  it('does not read the body ahead: the second body chunk is pulled by the second read', async () => {
    const { batches, seen, aborted } = await openPieces(['data: a\n\n', 'data: b\n\n', 'data: end\n\n']);
    expect(seen.pulls).toBe(0);
    expect(await batches.read()).toEqual(['a']);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen.pulls).toBe(1);
    expect(await batches.read()).toEqual(['b']);
    expect(seen.pulls).toBe(2);
    expect(aborted()).toBe(false);
  });

  it('an error after chunks of the same batch: the read answers the chunks, the next rejects, and every later read rejects with the same error', async () => {
    const provider = await openPieces(['data: a\n\ndata: fail\n\ndata: c\n\n']);
    expect(await provider.batches.read()).toEqual(['a']);
    // Not let go yet: the error is still to be seen.
    expect(provider.seen.cancelled).toBe(false);
    const error = await rejection(provider.batches.read());
    expect((error as ProviderError).code).toBe('content_filter');
    expect(provider.seen.cancelled).toBe(true);
    expect(provider.aborted()).toBe(true);
    expect(await rejection(provider.batches.read())).toBe(error);
    expect(provider.seen.pulls).toBe(1);

    // A throwing step is mapped to upstream_error once: later reads throw that very error.
    const thrown = await openPieces(['data: a\n\ndata: bad\n\n']);
    expect(await thrown.batches.read()).toEqual(['a']);
    const mapped = await rejection(thrown.batches.read());
    expect(mapped).toBeInstanceOf(ProviderError);
    expect((mapped as ProviderError).code).toBe('upstream_error');
    expect(await rejection(thrown.batches.read())).toBe(mapped);
    expect(await rejection(thrown.batches.read())).toBe(mapped);

    // The error is made once, from the step's reason: later reads do not map it again.
    const wrap = {
      step: (reason: unknown) => new Error('step failed', { cause: reason }),
      read: (error: unknown) => new Error('read failed', { cause: error }),
    };
    const wrapped = sseChunkBatches(body(['data: a\n\ndata: bad\n\n']).response, steps(), recordingLink().link, wrap);
    expect(await wrapped.read()).toEqual(['a']);
    const made = await rejection(wrapped.read());
    expect((made as Error).message).toBe('step failed');
    expect((made as Error).cause).toBeInstanceOf(TypeError);
    expect(await rejection(wrapped.read())).toBe(made);

    // A body that fails while read: the read that met it rejects, and so does every later one.
    const cut = await openPieces(['data: a\n\n', new Error('socket hang up')]);
    expect(await cut.batches.read()).toEqual(['a']);
    const failed = await rejection(cut.batches.read());
    expect((failed as ProviderError).code).toBe('upstream_error');
    expect(await rejection(cut.batches.read())).toBe(failed);
  });

  it('a step that closes the sink ends the batches: its read answers the chunks before it, then every read answers the end', async () => {
    const piece = body(['data: a\n\ndata: b\n\ndata: done\n\ndata: never\n\n', 'data: later\n\n']);
    const { calls, link } = recordingLink();
    const batches = sseChunkBatches(piece.response, closingSteps(), link, passErrors);
    expect(await batches.read()).toEqual(['a', 'b']);
    // Let go before the caller sees the end: the rest of the body is not read, the call not aborted.
    expect(piece.seen.cancelled).toBe(true);
    expect(calls).toEqual({ abort: 0, unlink: 1 });
    expect(await batches.read()).toBeUndefined();
    expect(await batches.read()).toBeUndefined();
    expect(piece.seen.pulls).toBe(1);
    expect(calls).toEqual({ abort: 0, unlink: 1 });

    // A closing step's own chunks go out; a close alone in its read answers the end at once.
    const both = sseChunkBatches(body(['data: a\n\ndata: both\n\n']).response, closingSteps(), recordingLink().link, passErrors);
    expect(await both.read()).toEqual(['a', 'both']);
    expect(await both.read()).toBeUndefined();
    const alone = sseChunkBatches(body(['data: a\n\n', 'data: done\n\n']).response, closingSteps(), recordingLink().link, passErrors);
    expect(await alone.read()).toEqual(['a']);
    expect(await alone.read()).toBeUndefined();
  });

  it.each([
    ['cancel cancels the body and aborts the call; every later read answers the end', ['data: a\n\n', 'data: b\n\n', 'data: end\n\n']],
    // The caller lets the stream go without reading on: the error it never saw is not thrown at it.
    ['a cancel before the error met after a batch’s chunks was thrown: every later read answers the end, as after any cancel', ['data: a\n\ndata: fail\n\n']],
  ])('%s', async (_name, pieces) => {
    const { batches, seen, aborted } = await openPieces(pieces);
    expect(await batches.read()).toEqual(['a']);
    await batches.cancel();
    expect(seen.cancelled).toBe(true);
    expect(aborted()).toBe(true);
    expect(await batches.read()).toBeUndefined();
    expect(await batches.read()).toBeUndefined();
    expect(seen.pulls).toBe(1);
  });

  it('a cancel while a read waits on the body: that read answers the end', async () => {
    let cancelled = false;
    const encoder = new TextEncoder();
    let pulls = 0;
    const hanging = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          // The first event, then a body that never sends again.
          if (pulls++ === 0) controller.enqueue(encoder.encode('data: a\n\n'));
          else return new Promise<void>(() => undefined);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const { calls, link } = recordingLink();
    const batches = sseChunkBatches(new Response(hanging), closingSteps(), link, passErrors);
    expect(await batches.read()).toEqual(['a']);
    const waiting = batches.read();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await batches.cancel();
    expect(await waiting).toBeUndefined();
    expect(cancelled).toBe(true);
    expect(calls).toEqual({ abort: 1, unlink: 1 });
    expect(await batches.read()).toBeUndefined();
  });
});

describe('sseChunkBatches: texts and cancels', () => {
  it('a batch carries, beside its chunks, the texts its steps gave (and holes where they gave none); the stream of it carries none', async () => {
    const textSteps: SseSteps<string, ClosingChunkSink<string>> = {
      transform(event, sink) {
        if (event.data === 'done') return sink.close();
        if (event.data === 'plain') return sink.enqueue('plain');
        sink.enqueue(event.data.toUpperCase(), event.data);
      },
      flush: (sink) => sink.error(new ProviderError('upstream_error', { accepted: true })),
    };
    const { link } = recordingLink();
    const batches = sseChunkBatches(new Response('data: a\n\ndata: plain\n\ndata: b\n\ndata: done\n\n'), textSteps, link, passErrors);
    const batch = await batches.read();
    expect([...(batch ?? [])]).toEqual(['A', 'plain', 'B']);
    expect(batch?.texts).toEqual(['a', undefined, 'b']);
    const streamed = await drain(streamOfBatches(sseChunkBatches(new Response('data: a\n\ndata: done\n\n'), textSteps, link, passErrors)));
    expect(streamed).toEqual({ chunks: ['A'] });
  });

  it('a cancel whose abort fails the read waiting on the body: that read and every later one answer the end, not an error', async () => {
    let body!: ReadableStreamDefaultController<Uint8Array>;
    let pulls = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        start(controller) {
          body = controller;
        },
        pull(controller) {
          if (pulls++ === 0) controller.enqueue(new TextEncoder().encode('data: a\n\n'));
          else return new Promise<void>(() => undefined);
        },
      },
      { highWaterMark: 0 },
    );
    // A call under a controller of the adapter's own: aborting it errors the body, as fetch does.
    const link = { abort: () => body.error(new DOMException('This operation was aborted', 'AbortError')), unlink: () => undefined };
    const batches = sseChunkBatches(new Response(stream), closingSteps(), link, passErrors);
    expect(await batches.read()).toEqual(['a']);
    const waiting = batches.read();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await batches.cancel();
    expect(await waiting).toBeUndefined();
    expect(await batches.read()).toBeUndefined();
  });
});

describe('chatStreamOf and pairedChatBatches', () => {
  const chatBatches = async () => ({ read: async () => undefined, cancel: async () => undefined });
  const base = { kind: 'mine', zeroDataRetention: false, chat: async () => ({}) as never };

  it('a chatStream made from the batches is their stream, and pairs them', async () => {
    const provider: ChatProvider = { ...base, chatBatches, chatStream: chatStreamOf(chatBatches) };
    expect(pairedChatBatches(provider)).toBe(chatBatches);
    const stream = await provider.chatStream({} as never, { upstream: 'm' });
    expect(await stream.getReader().read()).toEqual({ done: true, value: undefined });
    // Spread as it is, the pair holds.
    expect(pairedChatBatches({ ...provider })).toBe(chatBatches);
  });

  it('a chatStream replaced by a wrapper, or batches of another pair, or none: not paired', () => {
    const adapter: ChatProvider = { ...base, chatBatches, chatStream: chatStreamOf(chatBatches) };
    expect(pairedChatBatches({ ...adapter, chatStream: async () => new ReadableStream() })).toBeUndefined();
    expect(pairedChatBatches({ ...adapter, chatBatches: async () => chatBatches() })).toBeUndefined();
    expect(pairedChatBatches({ ...base, chatStream: adapter.chatStream })).toBeUndefined();
  });
});
