import { randomBase62, type ChatCompletion, type ToolCall } from '@tollgate/core';
import { ProviderError } from '../provider';
import type { GeminiPart, GeminiResponse } from './gemini-api';
import { mapGeminiFinishReason } from './map-gemini-finish-reason';
import { mapGeminiUsage } from './map-gemini-usage';

/** A tool call id for a Gemini function call, which usually comes without one. */
export function geminiToolCallId(part: GeminiPart): string {
  return part.functionCall?.id || `call_${randomBase62(24)}`;
}

/**
 * Maps a `generateContent` reply to an OpenAI chat completion: the first candidate's text (thought
 * parts left out) and function calls. A blocked prompt, or a candidate stopped by a safety filter
 * before it said anything, throws `content_filter`.
 */
export function mapGeminiResponse(response: GeminiResponse, now: () => number = Date.now): ChatCompletion {
  const candidate = response.candidates?.[0];
  if (candidate === undefined) {
    throw new ProviderError(response.promptFeedback?.blockReason ? 'content_filter' : 'upstream_error', { accepted: true, status: 200 });
  }
  let text: string | null = null;
  const toolCalls: ToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.text !== undefined && !part.thought) text = (text ?? '') + part.text;
    if (part.functionCall) {
      const args = JSON.stringify(part.functionCall.args ?? {});
      toolCalls.push({ id: geminiToolCallId(part), type: 'function', function: { name: part.functionCall.name, arguments: args } });
    }
  }
  const finish = mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0);
  if (finish === 'content_filter' && !text && toolCalls.length === 0) throw new ProviderError('content_filter', { accepted: true, status: 200 });
  return {
    id: response.responseId ?? 'gemini',
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: response.modelVersion ?? '',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: finish,
      },
    ],
    ...(response.usageMetadata ? { usage: mapGeminiUsage(response.usageMetadata) } : {}),
  };
}
