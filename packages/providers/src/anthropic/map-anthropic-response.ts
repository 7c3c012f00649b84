import type { ChatCompletion, ToolCall } from '@tollgate/core';
import type { AnthropicReply } from './anthropic-api';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason';
import { mapAnthropicUsage } from './map-anthropic-usage';

/**
 * Maps a Messages reply to an OpenAI chat completion: text blocks joined, tool_use blocks as tool
 * calls (input serialised as the arguments string), thinking blocks left out.
 */
export function mapAnthropicResponse(response: AnthropicReply, now: () => number = Date.now): ChatCompletion {
  let text: string | null = null;
  const toolCalls: ToolCall[] = [];
  for (const block of response.content ?? []) {
    if (block.type === 'text') text = (text ?? '') + block.text;
    if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  return {
    id: response.id,
    object: 'chat.completion',
    created: Math.floor(now() / 1000),
    model: response.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: text, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: mapAnthropicFinishReason(response.stop_reason),
      },
    ],
    usage: mapAnthropicUsage(response.usage ?? {}),
  };
}
