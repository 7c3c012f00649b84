import type { ChatCompletionChunk, FinishReason } from '@tollgate/core';
import type { SseEvent } from '@tollgate/sse';
import type { SseSteps } from '../http/open-upstream-stream';
import { ProviderError } from '../provider';
import type { GeminiResponse, GeminiUsageMetadata } from './gemini-api';
import { mapGeminiError } from './map-gemini-error';
import { mapGeminiFinishReason } from './map-gemini-finish-reason';
import { geminiToolCallId } from './map-gemini-response';
import { mapGeminiUsage } from './map-gemini-usage';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/**
 * Translates the events of `streamGenerateContent?alt=sse` (each a whole GenerateContentResponse
 * holding the next piece) into OpenAI chunks: the role first, text deltas, each function call as
 * one tool-call delta with its whole arguments (Gemini does not split them), one chunk with the
 * finish reason, then a usage chunk from the last `usageMetadata`. A blocked prompt, or a safety
 * stop before anything was said, errors the stream with `content_filter`; an error event, a
 * malformed event or an end without a finish reason errors it with a {@link ProviderError}.
 * @example
 * const chunks = await openUpstreamStream(signal, post, geminiSteps());
 */
export function geminiSteps(): SseSteps<ChatCompletionChunk> {
  let id = 'gemini';
  let model = '';
  const created = Math.floor(Date.now() / 1000);
  let usage: GeminiUsageMetadata | undefined;
  let started = false;
  let said = false;
  let toolCalls = 0;
  let finish: string | undefined;

  const chunk = (delta: Delta, finishReason: FinishReason | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });

  return {
    transform(sse, controller) {
      let event: GeminiResponse & { error?: { code?: number } };
      try {
        event = JSON.parse(sse.data) as typeof event;
      } catch {
        controller.error(new ProviderError('upstream_error', { accepted: true }));
        return;
      }
      if (event.error) {
        controller.error(mapGeminiError(Number(event.error.code) || 500, event, undefined, true));
        return;
      }
      if (event.promptFeedback?.blockReason) {
        controller.error(new ProviderError('content_filter', { accepted: true, status: 200 }));
        return;
      }
      usage = event.usageMetadata ?? usage;
      // Events after the finish can only refine usage.
      if (finish !== undefined) return;
      id = event.responseId ?? id;
      model = event.modelVersion ?? model;
      const candidate = event.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        const delta: Delta = {};
        if (part.text && !part.thought) delta.content = part.text;
        if (part.functionCall) {
          const args = JSON.stringify(part.functionCall.args ?? {});
          delta.tool_calls = [
            { index: toolCalls++, id: geminiToolCallId(part), type: 'function', function: { name: part.functionCall.name, arguments: args } },
          ];
        }
        if (delta.content === undefined && delta.tool_calls === undefined) continue;
        if (!started) {
          started = true;
          controller.enqueue(chunk({ role: 'assistant', content: '' }));
        }
        said = true;
        controller.enqueue(chunk(delta));
      }
      if (candidate?.finishReason === undefined) return;
      finish = candidate.finishReason;
      const reason = mapGeminiFinishReason(finish, toolCalls > 0);
      if (reason === 'content_filter' && !said) {
        controller.error(new ProviderError('content_filter', { accepted: true, status: 200 }));
        return;
      }
      if (!started) controller.enqueue(chunk({ role: 'assistant', content: '' }));
      controller.enqueue(chunk({}, reason));
    },
    flush(controller) {
      // Gemini streams have no terminator: an end without a finish reason means the stream was cut.
      if (finish === undefined) {
        controller.error(new ProviderError('upstream_error', { accepted: true }));
        return;
      }
      if (usage) controller.enqueue({ id, object: 'chat.completion.chunk', created, model, choices: [], usage: mapGeminiUsage(usage) });
    },
  };
}

/**
 * {@link geminiSteps} as a TransformStream, for reading a body through `createSseDecoder()`.
 * @example
 * const chunks = response.body!.pipeThrough(createSseDecoder()).pipeThrough(createGeminiStream());
 */
export function createGeminiStream(): TransformStream<SseEvent, ChatCompletionChunk> {
  const steps = geminiSteps();
  return new TransformStream<SseEvent, ChatCompletionChunk>({
    transform: (event, controller) => steps.transform(event, controller),
    flush: (controller) => steps.flush(controller),
  });
}
