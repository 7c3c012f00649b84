import type { ChatCompletionChunk } from '@tollgate/core';
import { createSseParser, type SseEvent } from '@tollgate/sse';
import type { ChatStream } from '../provider';
import { ProviderError } from '../provider';
import { mapOpenAIError } from './map-openai-error';
import { isOpenAIChatChunk } from './openai-api';
import { abortReason } from '../http/post-json';
import type { UpstreamCall } from './post-openai';

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

  /** The next parsed event, reading more of the body when none is waiting; undefined at the body's end. */
  async function nextEvent(): Promise<SseEvent | undefined> {
    while (next === events.length) {
      events.length = 0;
      next = 0;
      if (bodyDone) return undefined;
      const read = await reader.read();
      if (read.done) {
        bodyDone = true;
        // A last event without its closing blank line still counts.
        parser.end();
      } else {
        parser.push(read.value);
      }
    }
    return events[next++];
  }

  return new ReadableStream<ChatCompletionChunk>(
    {
      async pull(controller) {
        for (;;) {
          let event: SseEvent | undefined;
          try {
            event = await nextEvent();
          } catch {
            await end(true);
            return controller.error(signal?.aborted ? abortReason(signal) : broken());
          }
          if (event === undefined) {
            await end(false);
            return controller.error(broken());
          }
          const { data } = event;
          if (data === '[DONE]') {
            await end(false);
            return controller.close();
          }
          // Some compatible servers send empty keepalive events; they carry nothing.
          if (data.trim() === '') continue;
          let parsed: unknown;
          try {
            parsed = JSON.parse(data);
          } catch {
            await end(true);
            return controller.error(broken());
          }
          if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
            await end(true);
            return controller.error(broken());
          }
          if (event.event === 'error' || 'error' in parsed) {
            await end(true);
            return controller.error(mapOpenAIError(undefined, parsed));
          }
          // A chunk Tollgate cannot read (choices not a list, usage not counts) is a broken stream.
          if (!isOpenAIChatChunk(parsed)) {
            await end(true);
            return controller.error(broken());
          }
          return controller.enqueue(parsed);
        }
      },
      async cancel() {
        await end(true);
      },
    },
    { highWaterMark: 0 },
  );
}
