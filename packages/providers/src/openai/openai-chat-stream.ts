import type { ChatCompletionChunk } from '@tollgate/core';
import { createSseParser, type SseEvent } from '@tollgate/sse';
import type { ChatStream } from '../provider';
import { ProviderError } from '../provider';
import { mapOpenAIError } from './map-openai-error';
import { isOpenAIChatChunk } from './openai-api';
import { abortReason } from '../http/post-json';
import type { UpstreamCall } from './post-openai';

/** An event that ends the stream: `[DONE]` (no error), or what the stream errors with. */
class StreamEnd {
  constructor(readonly error?: unknown) {}
}

const DONE = new StreamEnd();

/**
 * The chunks of an upstream SSE body, ending at `[DONE]`. A body that ends without `[DONE]`, drops,
 * or holds a malformed event errors with `upstream_error` (accepted); an error event maps like an
 * error body. Pull-based, so a slow client slows the upstream read; cancel aborts the upstream fetch.
 */
export function openaiChatStream(call: UpstreamCall, signal: AbortSignal | undefined): ChatStream {
  // One stream over the body's own reader, with a push parser, rather than a decoder
  // TransformStream in between: a promise hop fewer per SSE event on the hot path.
  const body = call.response.body;
  if (body === null) {
    call.unlink();
    throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
  }
  const reader = body.getReader();
  const events: SseEvent[] = [];
  const parser = createSseParser((event) => events.push(event));
  let next = 0;
  let bodyDone = false;
  let over = false;
  // Awaited before the stream closes or errors, so the upstream is released by the time the
  // consumer sees the end (leak checks right after a stream need no extra tick).
  const end = async (abort: boolean) => {
    if (over) return;
    over = true;
    call.unlink();
    if (abort) call.abort();
    await reader.cancel().catch(() => undefined);
  };
  const broken = () => new ProviderError('upstream_error', { accepted: true, status: 200 });

  /**
   * What an event is: a chunk to pass on, `undefined` to skip, or the end of the stream (`DONE`, or
   * the error to end it with).
   */
  function judge(event: SseEvent): ChatCompletionChunk | undefined | StreamEnd {
    const { data } = event;
    if (data === '[DONE]') return DONE;
    // Some compatible servers send empty keepalive events; they carry nothing.
    if (data.trim() === '') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return new StreamEnd(broken());
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return new StreamEnd(broken());
    if (event.event === 'error' || 'error' in parsed) return new StreamEnd(mapOpenAIError(undefined, parsed));
    // A chunk Tollgate cannot read (choices not a list, usage not counts) is a broken stream.
    if (!isOpenAIChatChunk(parsed)) return new StreamEnd(broken());
    return parsed;
  }

  return new ReadableStream<ChatCompletionChunk>(
    {
      // Every chunk already parsed from the bytes read goes out in one pull (they are in memory
      // anyway, so back-pressure still holds: the body is read again only once they were taken).
      async pull(controller) {
        let sent = false;
        for (;;) {
          while (next < events.length) {
            const verdict = judge(events[next] as SseEvent);
            if (verdict === DONE) {
              next++;
              await end(false);
              return controller.close();
            }
            if (verdict instanceof StreamEnd) {
              // An error drops what is queued: the chunks before it go out first, and the next pull judges it again.
              if (sent) return;
              next++;
              await end(true);
              return controller.error(verdict.error);
            }
            next++;
            if (verdict === undefined) continue;
            controller.enqueue(verdict);
            sent = true;
          }
          if (sent) return;
          events.length = 0;
          next = 0;
          if (bodyDone) {
            await end(false);
            return controller.error(broken());
          }
          let read: ReadableStreamReadResult<Uint8Array>;
          try {
            read = await reader.read();
          } catch {
            await end(true);
            return controller.error(signal?.aborted ? abortReason(signal) : broken());
          }
          if (read.done) {
            bodyDone = true;
            // A last event without its closing blank line still counts.
            parser.end();
          } else {
            parser.push(read.value);
          }
        }
      },
      async cancel() {
        await end(true);
      },
    },
    { highWaterMark: 0 },
  );
}
