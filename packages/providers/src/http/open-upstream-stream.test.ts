import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { pieceBody } from '../../test/piece-body';
import { type ChunkSink, openUpstreamStream as openBatches, type SseSteps, streamOfBatches } from './open-upstream-stream';

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
    const slow = body(['data: a\n\n', 'data: b\n\n', 'data: end\n\n']);
    let signal: AbortSignal | undefined;
    const stream = await openUpstreamStream(
      undefined,
      async (given) => {
        signal = given;
        return slow.response;
      },
      steps(),
    );
    const reader = stream.getReader();
    expect((await reader.read()).value).toBe('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(slow.seen.pulls).toBe(1);
    await reader.cancel();
    expect(slow.seen.cancelled).toBe(true);
    expect(signal?.aborted).toBe(true);
  });
});
