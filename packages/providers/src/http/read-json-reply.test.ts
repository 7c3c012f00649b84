import { describe, expect, it } from 'vitest';
import { REPLY_BODY_LIMIT, readJsonReply } from './read-json-reply';

/** A reply of `{}` padded with spaces (valid JSON) to `size` bytes, in 1 MiB reads, recording its cancel. */
function paddedReply(size: number) {
  const state = { cancelled: false, sent: 0 };
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state.sent >= size) return controller.close();
        const piece = new Uint8Array(Math.min(1 << 20, size - state.sent)).fill(0x20);
        if (state.sent === 0) piece.set([0x7b, 0x7d]); // {}
        state.sent += piece.byteLength;
        controller.enqueue(piece);
      },
      cancel() {
        state.cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { response: new Response(body), state };
}

describe('readJsonReply', () => {
  it('reads a reply of up to 64 MiB and refuses one byte more, letting the rest go', async () => {
    expect(REPLY_BODY_LIMIT).toBe(64 * 1024 * 1024);
    expect(await readJsonReply(paddedReply(REPLY_BODY_LIMIT).response)).toEqual({});
    const over = paddedReply(REPLY_BODY_LIMIT + 1);
    await expect(readJsonReply(over.response)).rejects.toThrow(RangeError);
    expect(over.state.cancelled).toBe(true);
  });

  it('rejects as json() does for a body that is not JSON or is empty, and parses UTF-8 across reads', async () => {
    await expect(readJsonReply(new Response('{"a":'))).rejects.toThrow(SyntaxError);
    await expect(readJsonReply(new Response(null))).rejects.toThrow(SyntaxError);
    const bytes = new TextEncoder().encode('{"text":"日本"}');
    const split = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 11)); // inside 日
        controller.enqueue(bytes.subarray(11));
        controller.close();
      },
    });
    expect(await readJsonReply(new Response(split))).toEqual({ text: '日本' });
  });
});
