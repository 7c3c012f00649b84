import type { ChatCompletionChunk, FinishReason, Usage } from '@tollgate/core';
import type { SseEvent } from '@tollgate/sse';
import type { SseSteps } from '../http/open-upstream-stream';
import { ProviderError } from '../provider';
import type { AnthropicStreamEvent, AnthropicUsage } from './anthropic-api';
import { mapAnthropicStreamError } from './map-anthropic-error';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason';
import { mapAnthropicUsage } from './map-anthropic-usage';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/**
 * Translates the events of a streamed Messages reply into OpenAI chunks: the role first, text and
 * tool-call argument deltas (tool calls numbered in order of appearance), one chunk with the
 * finish reason, then a usage chunk with empty choices. Thinking deltas are not forwarded (the chat
 * wire has no field for them). An `error` event, a malformed event or an end before `message_stop`
 * errors the stream with a {@link ProviderError}.
 * @example
 * const chunks = await openUpstreamStream(signal, post, anthropicSteps());
 */
export function anthropicSteps(): SseSteps<ChatCompletionChunk> {
  let id = 'msg';
  let model = '';
  const created = Math.floor(Date.now() / 1000);
  const usage: AnthropicUsage = {};
  let finish: FinishReason = 'stop';
  let done = false;
  const toolIndexes = new Map<number, number>();
  /** Tool blocks no argument text came for yet: a call without input streams one empty partial_json, and its arguments are `{}`. */
  const withoutArguments = new Set<number>();

  const chunk = (delta: Delta, finishReason: FinishReason | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });

  return {
    transform(sse, controller) {
      if (done) return;
      let event: AnthropicStreamEvent;
      try {
        event = JSON.parse(sse.data) as AnthropicStreamEvent;
      } catch {
        controller.error(new ProviderError('upstream_error', { accepted: true }));
        return;
      }
      switch (event.type) {
        case 'message_start':
          id = event.message.id ?? id;
          model = event.message.model ?? model;
          Object.assign(usage, event.message.usage);
          controller.enqueue(chunk({ role: 'assistant', content: '' }));
          return;
        case 'content_block_start': {
          const block = event.content_block;
          if (block.type === 'text' && block.text) controller.enqueue(chunk({ content: block.text }));
          if (block.type === 'tool_use') {
            const index = toolIndexes.size;
            toolIndexes.set(event.index, index);
            withoutArguments.add(event.index);
            const call = { index, id: block.id, type: 'function' as const, function: { name: block.name, arguments: '' } };
            controller.enqueue(chunk({ tool_calls: [call] }));
          }
          return;
        }
        case 'content_block_delta': {
          const delta = event.delta;
          if (delta.type === 'text_delta' && delta.text) controller.enqueue(chunk({ content: delta.text }));
          const index = toolIndexes.get(event.index);
          if (delta.type === 'input_json_delta' && delta.partial_json && index !== undefined) {
            withoutArguments.delete(event.index);
            controller.enqueue(chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] }));
          }
          return;
        }
        case 'content_block_stop': {
          // As the whole reply (and OpenAI) give it: a client parses the arguments, and "" is not JSON.
          const index = toolIndexes.get(event.index);
          if (index !== undefined && withoutArguments.delete(event.index))
            controller.enqueue(chunk({ tool_calls: [{ index, function: { arguments: '{}' } }] }));
          return;
        }
        case 'message_delta':
          // A later message_delta without a stop_reason keeps the one given (there may be several).
          if (event.delta?.stop_reason != null) finish = mapAnthropicFinishReason(event.delta.stop_reason);
          // message_delta usage is cumulative; only the fields it carries replace message_start's.
          for (const [key, value] of Object.entries(event.usage ?? {})) if (value != null) Object.assign(usage, { [key]: value });
          return;
        case 'message_stop':
          done = true;
          controller.enqueue(chunk({}, finish));
          controller.enqueue(usageChunk(id, created, model, mapAnthropicUsage(usage)));
          return;
        case 'error':
          done = true;
          controller.error(mapAnthropicStreamError(event));
          return;
        default:
          // ping and event types added later carry nothing to forward.
          return;
      }
    },
    flush(controller) {
      // A stream that ends without message_stop was cut: what arrived is incomplete.
      if (!done) controller.error(new ProviderError('upstream_error', { accepted: true }));
    },
  };
}

/**
 * {@link anthropicSteps} as a TransformStream, for reading a body through `createSseDecoder()`.
 * @example
 * const chunks = response.body!.pipeThrough(createSseDecoder()).pipeThrough(createAnthropicStream());
 */
export function createAnthropicStream(): TransformStream<SseEvent, ChatCompletionChunk> {
  const steps = anthropicSteps();
  return new TransformStream<SseEvent, ChatCompletionChunk>({
    transform: (event, controller) => steps.transform(event, controller),
    flush: (controller) => steps.flush(controller),
  });
}

function usageChunk(id: string, created: number, model: string, usage: Usage): ChatCompletionChunk {
  return { id, object: 'chat.completion.chunk', created, model, choices: [], usage };
}
