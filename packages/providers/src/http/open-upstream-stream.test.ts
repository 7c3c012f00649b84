import { BODY_READER, type BodyReader, readWhenReadable } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { type ChatProvider, ProviderError } from '../provider';
import { pieceBody } from '../../test/piece-body';
import { chatStreamOf, pairedChatBatches, streamOfBatches } from './chunk-batches';
import {
  type ChunkSink,
  type ClosingChunkSink,
  openUpstreamStream as openBatches,
  type SseStreamErrors,
  type SseSteps,
  sseChunkBatches,
} from './open-upstream-stream';

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

/** Error mappers that wrap what they map, so a test sees which one made an error and from what. */
const WRAP = {
  step: (reason: unknown) => new Error('step failed', { cause: reason }),
  read: (error: unknown) => new Error('read failed', { cause: error }),
};

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

  it('a line that never ends is upstream_error at the parser’s bound, after the events before it; the body is let go', async () => {
    // 1 MiB pieces of one endless line, made as pulled: the parser's bound (64 Mi characters) stops the reads.
    const piece = new TextEncoder().encode('a'.repeat(1 << 20));
    let pulls = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          controller.enqueue(pulls++ === 0 ? new TextEncoder().encode('data: a\n\ndata: ') : piece);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    const result = await drain(await openUpstreamStream(undefined, async () => new Response(endless), steps()));
    expect(result.chunks).toEqual(['a']);
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as ProviderError).code).toBe('upstream_error');
    expect((result.error as ProviderError).accepted).toBe(true);
    expect(cancelled).toBe(true);
    expect(pulls).toBeLessThanOrEqual(66);
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
    const wrapped = sseChunkBatches(body(['data: a\n\ndata: bad\n\n']).response, steps(), recordingLink().link, WRAP);
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

/**
 * A body reader that answers what it has now (`readNow`, `whenReadable`), as @tollgate/node's
 * upstream replies do (packages/node/src/upstream-response.ts): the test pushes pieces, ends or
 * fails the body, and each wakes the one waiter. `read` waits the same way, with a promise.
 */
function pushReader() {
  const encoder = new TextEncoder();
  const queue: Uint8Array[] = [];
  const seen = { readNows: 0, reads: 0, cancels: 0 };
  let ended = false;
  let failure: Error | undefined;
  let cancelled = false;
  let waiter: (() => void) | undefined;
  const wakeUp = () => {
    const wake = waiter;
    waiter = undefined;
    wake?.();
  };
  const reader: Required<BodyReader> = {
    readNow() {
      seen.readNows++;
      if (cancelled) return { done: true, value: undefined };
      if (failure) throw failure;
      const value = queue.shift();
      if (value !== undefined) return { done: false, value };
      return ended ? { done: true, value: undefined } : null;
    },
    whenReadable(wake) {
      waiter = wake;
    },
    read() {
      seen.reads++;
      return readWhenReadable(reader);
    },
    async cancel() {
      seen.cancels++;
      cancelled = true;
      wakeUp();
    },
  };
  const response = new Response(null);
  Object.defineProperty(response, BODY_READER, { value: () => reader });
  return {
    response,
    reader,
    seen,
    /** Whether a waiter is set (`whenReadable`, or a `read` waiting). */
    waiting: () => waiter !== undefined,
    push(...pieces: string[]) {
      for (const piece of pieces) queue.push(encoder.encode(piece));
      wakeUp();
    },
    end() {
      ended = true;
      wakeUp();
    },
    fail(error: Error) {
      failure = error;
      wakeUp();
    },
  };
}

/** Batches with `readNow` over a {@link pushReader} (fails the test when they have none). */
function pushBatches(steps: SseSteps<string, ClosingChunkSink<string>>, errors: SseStreamErrors = passErrors) {
  const body = pushReader();
  const { calls, link } = recordingLink();
  const batches = sseChunkBatches(body.response, steps, link, errors);
  if (batches.readNow === undefined || batches.whenReadable === undefined) throw new Error('batches without readNow');
  const readNow = () => {
    const batch = batches.readNow?.();
    // A plain array, so that toEqual does not compare a `texts` the steps never gave.
    return batch ? [...batch] : batch;
  };
  return { ...body, batches, calls, readNow };
}

/** The error `run` throws (fails the test when it returns). */
function thrown(run: () => unknown): unknown {
  try {
    const value = run();
    return expect.unreachable(`returned ${JSON.stringify(value)}`);
  } catch (error) {
    return error;
  }
}

describe('sseChunkBatches over a reader that answers what it has now (readNow)', () => {
  it('readNow answers null while no whole event is buffered, without a promised read', () => {
    const body = pushBatches(steps());
    expect(body.readNow()).toBeNull();
    expect(body.seen).toEqual({ readNows: 1, reads: 0, cancels: 0 });
    // Bytes that make no whole event yet: still null, the piece taken.
    body.push('data: a');
    expect(body.readNow()).toBeNull();
    expect(body.seen).toEqual({ readNows: 3, reads: 0, cancels: 0 });
    expect(body.calls).toEqual({ abort: 0, unlink: 0 });
  });

  it('answers every chunk of the events one body read brought as one batch, one body read per batch', () => {
    const body = pushBatches(steps());
    body.push('data: a\n\ndata: two\n\ndata: b\n\n', 'data: c\n\n');
    expect(body.readNow()).toEqual(['a', 'two-a', 'two-b', 'b']);
    expect(body.seen.readNows).toBe(1);
    expect(body.readNow()).toEqual(['c']);
    expect(body.seen.readNows).toBe(2);
    expect(body.readNow()).toBeNull();
    expect(body.seen.reads).toBe(0);
  });

  it('an event split across two body reads: null after the first part, its chunk after the second', () => {
    const body = pushBatches(steps());
    body.push('data: a\n\ndata: b');
    expect(body.readNow()).toEqual(['a']);
    expect(body.readNow()).toBeNull();
    body.push('\n\n');
    expect(body.readNow()).toEqual(['b']);
    // A body read that gives no chunk (a comment) is read past in the same readNow.
    body.push(': keepalive\n\n', 'data: c\n\n');
    expect(body.readNow()).toEqual(['c']);
    expect(body.readNow()).toBeNull();
  });

  it('whenReadable waits on the reader: the wake comes when the body has something new', () => {
    const body = pushBatches(steps());
    expect(body.readNow()).toBeNull();
    let wakes = 0;
    body.batches.whenReadable?.(() => wakes++);
    expect(body.waiting()).toBe(true);
    expect(wakes).toBe(0);
    body.push('data: a\n\n');
    expect(wakes).toBe(1);
    expect(body.readNow()).toEqual(['a']);
    // Called once: a second push wakes no one.
    body.push('data: b\n\n');
    expect(wakes).toBe(1);
  });

  it('[DONE] (a step that closes the sink): the chunks before it, then the end; the body let go, the call not aborted', () => {
    const body = pushBatches(closingSteps());
    body.push('data: a\n\ndata: done\n\ndata: never\n\n');
    expect(body.readNow()).toEqual(['a']);
    // Let go before the caller sees the end, as with read(): cancelled (the body did not end), unlinked.
    expect(body.calls).toEqual({ abort: 0, unlink: 1 });
    expect(body.seen.cancels).toBe(1);
    const readNows = body.seen.readNows;
    expect(body.readNow()).toBeUndefined();
    expect(body.readNow()).toBeUndefined();
    // The rest of the body is not read.
    expect(body.seen.readNows).toBe(readNows);
    expect(body.calls).toEqual({ abort: 0, unlink: 1 });

    // A close alone in its body read answers the end at once.
    const alone = pushBatches(closingSteps());
    alone.push('data: done\n\n');
    expect(alone.readNow()).toBeUndefined();
    expect(alone.calls).toEqual({ abort: 0, unlink: 1 });
  });

  it('the body’s end: the flush’s chunks, then the end; nothing cancelled or aborted', () => {
    const body = pushBatches(steps());
    body.push('data: a\n\n', 'data: end\n\n');
    expect(body.readNow()).toEqual(['a']);
    // `end` gives no chunk: read past; then the body has nothing now.
    expect(body.readNow()).toBeNull();
    body.end();
    expect(body.readNow()).toEqual(['last']);
    expect(body.calls).toEqual({ abort: 0, unlink: 1 });
    expect(body.readNow()).toBeUndefined();
    expect(body.readNow()).toBeUndefined();
    // Read to its end: nothing to cancel.
    expect(body.seen.cancels).toBe(0);

    // A last event without its closing blank line still counts; a flush with no chunk answers the end with that batch's.
    const quiet: SseSteps<string, ClosingChunkSink<string>> = { transform: (event, sink) => sink.enqueue(event.data), flush: () => undefined };
    const unterminated = pushBatches(quiet);
    unterminated.push('data: z');
    expect(unterminated.readNow()).toBeNull();
    unterminated.end();
    expect(unterminated.readNow()).toEqual(['z']);
    expect(unterminated.readNow()).toBeUndefined();
    expect(unterminated.calls).toEqual({ abort: 0, unlink: 1 });
  });

  it('a step’s error (mapped by `errors.step`): the chunks before it, then thrown by this readNow and every later one; the call cut', () => {
    const body = pushBatches(steps(), WRAP);
    body.push('data: a\n\ndata: fail\n\ndata: c\n\n');
    expect(body.readNow()).toEqual(['a']);
    // Not let go yet: the error is still to be seen.
    expect(body.calls).toEqual({ abort: 0, unlink: 0 });
    const error = thrown(() => body.readNow()) as Error;
    expect(error.message).toBe('step failed');
    expect((error.cause as ProviderError).code).toBe('content_filter');
    expect(body.calls).toEqual({ abort: 1, unlink: 1 });
    expect(body.seen.cancels).toBe(1);
    expect(thrown(() => body.readNow())).toBe(error);
    expect(thrown(() => body.readNow())).toBe(error);
    expect(body.calls).toEqual({ abort: 1, unlink: 1 });

    // A throwing step alone in its batch: thrown at once.
    const bad = pushBatches(steps(), WRAP);
    bad.push('data: bad\n\n');
    const made = thrown(() => bad.readNow()) as Error;
    expect(made.message).toBe('step failed');
    expect(made.cause).toBeInstanceOf(TypeError);
    expect(bad.calls).toEqual({ abort: 1, unlink: 1 });

    // A body that ends too soon: the flush's error.
    const short = pushBatches(steps(), WRAP);
    short.push('data: a\n\n');
    short.end();
    expect(short.readNow()).toEqual(['a']);
    const early = thrown(() => short.readNow()) as Error;
    expect(early.message).toBe('step failed');
    expect((early.cause as ProviderError).code).toBe('upstream_error');
    // The body is over: the call unlinked, nothing to cancel or abort.
    expect(short.calls).toEqual({ abort: 0, unlink: 1 });
    expect(short.seen.cancels).toBe(0);
    expect(thrown(() => short.readNow())).toBe(early);
  });

  it('a body read that fails (mapped by `errors.read`): thrown by this readNow and every later one; the call cut', () => {
    const body = pushBatches(steps(), WRAP);
    body.push('data: a\n\n');
    expect(body.readNow()).toEqual(['a']);
    const cut = new TypeError('terminated');
    body.fail(cut);
    const error = thrown(() => body.readNow()) as Error;
    expect(error.message).toBe('read failed');
    expect(error.cause).toBe(cut);
    expect(body.calls).toEqual({ abort: 1, unlink: 1 });
    expect(body.seen.cancels).toBe(1);
    expect(thrown(() => body.readNow())).toBe(error);
    expect(body.calls).toEqual({ abort: 1, unlink: 1 });
  });

  it('the read errors of openUpstreamStream: a failed body read is upstream_error', async () => {
    const body = pushReader();
    const batches = await openBatches(undefined, async () => body.response, steps());
    body.push('data: a\n\n');
    expect(batches.readNow?.()).toEqual(['a']);
    body.fail(new TypeError('terminated'));
    const error = thrown(() => batches.readNow?.());
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('upstream_error');
  });

  it('cancel cuts the call, and every readNow after it answers the end, even with events buffered', async () => {
    const body = pushBatches(steps());
    body.push('data: a\n\n');
    expect(body.readNow()).toEqual(['a']);
    body.push('data: b\n\n');
    await body.batches.cancel();
    expect(body.calls).toEqual({ abort: 1, unlink: 1 });
    expect(body.seen.cancels).toBe(1);
    expect(body.readNow()).toBeUndefined();
    expect(body.readNow()).toBeUndefined();

    // An error met after a batch's chunks and not thrown yet is dropped with the rest.
    const failing = pushBatches(steps());
    failing.push('data: a\n\ndata: fail\n\n');
    expect(failing.readNow()).toEqual(['a']);
    await failing.batches.cancel();
    expect(failing.readNow()).toBeUndefined();
    expect(failing.calls).toEqual({ abort: 1, unlink: 1 });
  });

  it('read() and readNow() share the batches: each takes on where the other stopped', async () => {
    const body = pushBatches(steps());
    body.push('data: a\n\ndata: b');
    expect(body.readNow()).toEqual(['a']);
    const next = body.batches.read();
    await new Promise((resolve) => setTimeout(resolve, 1));
    body.push('\n\ndata: c\n\n');
    expect([...((await next) ?? [])]).toEqual(['b', 'c']);
    body.push('data: end\n\n');
    body.end();
    expect(body.readNow()).toEqual(['last']);
    expect(await body.batches.read()).toBeUndefined();
    expect(body.calls).toEqual({ abort: 0, unlink: 1 });
  });

  it('batches carry the texts the steps gave, taken with readNow as with read()', () => {
    const textSteps: SseSteps<string, ClosingChunkSink<string>> = {
      transform(event, sink) {
        if (event.data === 'plain') return sink.enqueue('plain');
        sink.enqueue(event.data.toUpperCase(), event.data);
      },
      flush: () => undefined,
    };
    const body = pushBatches(textSteps);
    body.push('data: a\n\ndata: plain\n\ndata: b\n\n');
    const batch = body.batches.readNow?.();
    expect([...(batch ?? [])]).toEqual(['A', 'plain', 'B']);
    expect(batch?.texts).toEqual(['a', undefined, 'b']);
    body.push('data: plain\n\n');
    expect(body.batches.readNow?.()?.texts).toBeUndefined();
  });

  it('a reader without readNow and whenReadable (a web stream’s) gives batches with read() only', async () => {
    const { link } = recordingLink();
    const web = sseChunkBatches(new Response('data: a\n\ndata: done\n\n'), closingSteps(), link, passErrors);
    expect(web.readNow).toBeUndefined();
    expect(web.whenReadable).toBeUndefined();
    expect(await web.read()).toEqual(['a']);
    expect(await web.read()).toBeUndefined();

    // readNow alone is not enough: the batches could not wait.
    const half = pushReader();
    const { whenReadable: _, ...withoutWait } = half.reader;
    const response = new Response(null);
    Object.defineProperty(response, BODY_READER, { value: () => withoutWait });
    const batches = sseChunkBatches(response, closingSteps(), recordingLink().link, passErrors);
    expect(batches.readNow).toBeUndefined();
    expect(batches.whenReadable).toBeUndefined();
    half.push('data: a\n\n');
    expect(await batches.read()).toEqual(['a']);
    expect(half.seen.reads).toBe(1);
  });
});

describe('sseChunkBatches: what a step enqueued is not kept once its batch was answered', () => {
  /** Every value reachable from `value` through own properties and array items (the sink's fields). */
  function reachable(value: unknown, seen = new Set<unknown>()): Set<unknown> {
    if (seen.has(value)) return seen;
    seen.add(value);
    if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) reachable(item, seen);
    return seen;
  }

  /** Object chunks with their texts, and the sink each step was given. */
  function objectSteps() {
    const sinks = new Set<object>();
    const made: object[] = [];
    const texts: string[] = [];
    const steps: SseSteps<object, ClosingChunkSink<object>> = {
      transform(event, sink) {
        sinks.add(sink);
        if (event.data === 'done') return sink.close();
        const chunk = { data: event.data };
        made.push(chunk);
        // A text made here, so no other copy is interned by the parser.
        const text = JSON.stringify(chunk);
        texts.push(text);
        sink.enqueue(chunk, text);
      },
      flush: (sink) => void sinks.add(sink),
    };
    return { steps, sinks, made, texts };
  }

  const expectNoneKept = (sinks: Set<object>, made: object[], texts: string[]) => {
    expect(sinks.size).toBe(1);
    const held = reachable([...sinks][0]);
    for (const chunk of made) expect(held.has(chunk)).toBe(false);
    for (const text of texts) expect(held.has(text)).toBe(false);
  };

  it('with readNow: the sink the steps write into holds none of the batch’s chunks or texts', () => {
    const { steps, sinks, made, texts } = objectSteps();
    const body = pushReader();
    const batches = sseChunkBatches(body.response, steps, recordingLink().link, passErrors);
    body.push('data: a\n\ndata: b\n\n');
    expect([...(batches.readNow?.() ?? [])]).toEqual([{ data: 'a' }, { data: 'b' }]);
    expect(made).toHaveLength(2);
    expectNoneKept(sinks, made, texts);
    body.push('data: c\n\ndata: done\n\n');
    expect([...(batches.readNow?.() ?? [])]).toEqual([{ data: 'c' }]);
    expectNoneKept(sinks, made, texts);
  });

  it('with read(): the same', async () => {
    const { steps, sinks, made, texts } = objectSteps();
    const batches = sseChunkBatches(new Response('data: a\n\ndata: b\n\n'), steps, recordingLink().link, passErrors);
    expect([...((await batches.read()) ?? [])]).toEqual([{ data: 'a' }, { data: 'b' }]);
    expectNoneKept(sinks, made, texts);
    expect(await batches.read()).toBeUndefined();
  });
});
