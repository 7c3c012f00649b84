import type { ChatCompletionChunk } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { streamOfBatches } from '../http/chunk-batches';
import { openaiChatBatches } from './openai-chat-stream';
import type { UpstreamCall } from './post-openai';
import { pieceBody } from '../../test/piece-body';

const encoder = new TextEncoder();
const chunk = (content: string) =>
  JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/** An upstream call over the given body pieces, recording pulls, cancels and aborts. */
function call(pieces: (string | Error)[]) {
  const piece = pieceBody(pieces);
  const seen = Object.assign(piece.seen, { aborted: false, unlinked: false });
  const body = piece.body;
  const upstream: UpstreamCall = {
    response: new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
    abort: () => (seen.aborted = true),
    unlink: () => (seen.unlinked = true),
  };
  return { upstream, seen };
}

async function drain(stream: ReadableStream<ChatCompletionChunk>): Promise<{ texts: string[]; error?: unknown }> {
  const texts: string[] = [];
  const reader = stream.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) texts.push(read.value.choices[0]!.delta.content ?? '');
  } catch (error) {
    return { texts, error };
  }
  return { texts };
}

/** The batches as the stream `chatStream` returns. */
const openaiChatStream = (call: UpstreamCall, signal: AbortSignal | undefined) => streamOfBatches(openaiChatBatches(call, signal));

describe('openaiChatStream', () => {
  it('parses events split anywhere (byte by byte, CRLF) and ends at [DONE] without aborting', async () => {
    const text = `data: ${chunk('héllo')}\r\n\r\n: keepalive\n\ndata: ${chunk(' world')}\n\ndata: [DONE]\n\n`;
    const { upstream, seen } = call([...encoder.encode(text)].map((byte) => String.fromCharCode(byte)).map((_, i) => text.slice(i, i + 1)));
    expect(await drain(openaiChatStream(upstream, undefined))).toEqual({ texts: ['héllo', ' world'] });
    expect(seen).toMatchObject({ aborted: false, unlinked: true });
  });

  it('delivers each event of a many-event chunk one pull at a time, then the error that follows them', async () => {
    const { upstream, seen } = call([`data: ${chunk('a')}\n\ndata: ${chunk('b')}\n\ndata: {not json}\n\n`]);
    const result = await drain(openaiChatStream(upstream, undefined));
    expect(result.texts).toEqual(['a', 'b']);
    expect((result.error as ProviderError).code).toBe('upstream_error');
    expect((result.error as ProviderError).accepted).toBe(true);
    expect(seen).toMatchObject({ aborted: true, unlinked: true, cancelled: true });
  });

  it('counts a last [DONE] without its blank line; a body ending without [DONE] is upstream_error', async () => {
    const done = call([`data: ${chunk('x')}\n\n`, 'data: [DONE]']);
    expect(await drain(openaiChatStream(done.upstream, undefined))).toEqual({ texts: ['x'] });
    const cut = call([`data: ${chunk('x')}\n\n`]);
    const result = await drain(openaiChatStream(cut.upstream, undefined));
    expect(result.texts).toEqual(['x']);
    expect((result.error as ProviderError).code).toBe('upstream_error');
  });

  it('maps an error event like an error body', async () => {
    const { upstream } = call([
      `data: ${chunk('a')}\n\nevent: error\ndata: {"error":{"message":"blocked","type":"invalid_request_error","code":"content_filter"}}\n\n`,
    ]);
    const result = await drain(openaiChatStream(upstream, undefined));
    expect(result.texts).toEqual(['a']);
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as ProviderError).code).toBe('content_filter');
  });

  it('reads the body only as the consumer pulls, and cancel aborts the upstream', async () => {
    const { upstream, seen } = call([`data: ${chunk('a')}\n\n`, `data: ${chunk('b')}\n\n`, `data: ${chunk('c')}\n\n`]);
    const reader = openaiChatStream(upstream, undefined).getReader();
    expect((await reader.read()).value!.choices[0]!.delta.content).toBe('a');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen.pulls).toBe(1);
    await reader.cancel();
    expect(seen).toMatchObject({ aborted: true, unlinked: true, cancelled: true, pulls: 1 });
  });

  it('a body that fails is upstream_error, or the abort reason when the caller aborted', async () => {
    const failed = call([`data: ${chunk('a')}\n\n`, new Error('socket hang up')]);
    const result = await drain(openaiChatStream(failed.upstream, undefined));
    expect(result.texts).toEqual(['a']);
    expect((result.error as ProviderError).code).toBe('upstream_error');
    const reason = new Error('client left');
    const aborted = call([new Error('aborted')]);
    const controller = new AbortController();
    controller.abort(reason);
    expect((await drain(openaiChatStream(aborted.upstream, controller.signal))).error).toBe(reason);
  });
});
