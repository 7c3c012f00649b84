import type { ChatCompletionChunk } from '@tollgate/core';
import { type ChunkBatches, ProviderError } from '../provider';
import { matchChatChunk } from './chat-chunk-template';
import { mapOpenAIError } from './map-openai-error';
import { isOpenAIChatChunk } from './openai-api';
import { type ClosingChunkSink, type SseSteps, sseChunkBatches } from '../http/open-upstream-stream';
import { abortReason } from '../http/post-json';
import type { UpstreamCall } from './post-openai';

/**
 * The chunks of an upstream SSE body, ending at `[DONE]`, in batches. A body that ends without
 * `[DONE]`, drops, or holds a malformed event errors with `upstream_error` (accepted); an error
 * event maps like an error body. Read on demand, so a slow client slows the upstream read; cancel
 * aborts the upstream fetch.
 */
export function openaiChatBatches(call: UpstreamCall, signal: AbortSignal | undefined): ChunkBatches<ChatCompletionChunk> {
  return sseChunkBatches(call.response, openaiChatSteps(), call, {
    step: (reason) => reason,
    read: () => (signal?.aborted ? abortReason(signal) : broken()),
  });
}

const broken = () => new ProviderError('upstream_error', { accepted: true, status: 200 });

/** OpenAI's chat events as steps: a chunk each, `[DONE]` closes, an error event or a chunk Tollgate cannot read errors. */
function openaiChatSteps(): SseSteps<ChatCompletionChunk, ClosingChunkSink<ChatCompletionChunk>> {
  return {
    transform(event, sink) {
      const { data } = event;
      if (data === '[DONE]') return sink.close();
      if (event.event !== 'error') {
        // Most chunks are a content delta in OpenAI's exact shape: read without a JSON.parse.
        const content = matchChatChunk(data);
        if (content !== undefined) return sink.enqueue(content, data);
      }
      // Some compatible servers send empty keepalive events; they carry nothing.
      if (data.trim() === '') return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data);
      } catch {
        return sink.error(broken());
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return sink.error(broken());
      if (event.event === 'error' || 'error' in parsed) return sink.error(mapOpenAIError(undefined, parsed));
      // A chunk Tollgate cannot read (choices not a list, usage not counts) is a broken stream.
      if (!isOpenAIChatChunk(parsed)) return sink.error(broken());
      // With the text it came as: the gateway splices its own fields into it rather than serialise the chunk again.
      sink.enqueue(parsed, data);
    },
    // A body that ends without `[DONE]` is a broken stream.
    flush: (sink) => sink.error(broken()),
  };
}
