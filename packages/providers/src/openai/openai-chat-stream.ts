import type { ChatCompletionChunk } from '@tollgate/core';
import { createSseDecoder } from '@tollgate/sse';
import type { ChatStream } from '../provider';
import { ProviderError } from '../provider';
import { mapOpenAIError } from './map-openai-error';
import { abortReason } from '../http/post-json';
import type { UpstreamCall } from './post-openai';

/**
 * The chunks of an upstream SSE body, ending at `[DONE]`. A body that ends without `[DONE]`, drops,
 * or holds a malformed event errors with `upstream_error` (accepted); an error event maps like an
 * error body. Pull-based, so a slow client slows the upstream read; cancel aborts the upstream fetch.
 */
export function openaiChatStream(call: UpstreamCall, signal: AbortSignal | undefined): ChatStream {
  const reader = call.response.body!.pipeThrough(createSseDecoder()).getReader();
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

  return new ReadableStream<ChatCompletionChunk>(
    {
      async pull(controller) {
        for (;;) {
          let read: ReadableStreamReadResult<{ data: string; event?: string }>;
          try {
            read = await reader.read();
          } catch {
            await end(true);
            return controller.error(signal?.aborted ? abortReason(signal) : broken());
          }
          if (read.done) {
            await end(false);
            return controller.error(broken());
          }
          const { data, event } = read.value;
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
          if (event === 'error' || 'error' in parsed) {
            await end(true);
            return controller.error(mapOpenAIError(undefined, parsed));
          }
          return controller.enqueue(parsed as ChatCompletionChunk);
        }
      },
      async cancel() {
        await end(true);
      },
    },
    { highWaterMark: 0 },
  );
}
