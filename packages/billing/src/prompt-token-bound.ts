import { utf8ByteLength } from '@tollgate/core';
import type { ChatRequest, ChatModelConfig } from '@tollgate/core';
import { measurePrompt } from './measure-prompt';

/** Tokens the bound counts for each message's role and framing. */
export const MESSAGE_OVERHEAD_TOKENS = 8;

const BOUND = { text: utf8ByteLength, perMessage: MESSAGE_OVERHEAD_TOKENS };

/**
 * An upper bound on a request's prompt tokens without a tokenizer, in O(bytes), for the hold: a
 * token of a byte-level tokenizer covers at least one byte, so UTF-8 bytes bound the text's
 * tokens. Counts UTF-8 bytes of all text (message text and text parts, tool definitions and an
 * object `tool_choice` as JSON, tool-call ids, names and arguments, tool-result ids, the strings of
 * other part types such as files) + 8 per message + `image_token_bound` (default 2,048) per image
 * part, capped at `context_tokens` when the model sets it.
 *
 * @example
 * const hold = chatHoldMicros(model.price, promptTokenBound(request, model), outputLimit);
 */
export function promptTokenBound(request: ChatRequest, model: ChatModelConfig): number {
  return measurePrompt(request, model, BOUND);
}
