import type { FinishReason } from '@tollgate/core';

/**
 * Maps an Anthropic `stop_reason` to an OpenAI `finish_reason`. A `refusal` (the model declined
 * mid-answer) is `content_filter`; `pause_turn` (a server tool paused the turn) ends the turn as `stop`.
 */
export function mapAnthropicFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
