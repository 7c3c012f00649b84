import type { ChatMessage, ChatRequest, ChatModelConfig } from '@tollgate/core';

/** Prompt-token bound of one inline image when the model sets no `image_token_bound`. */
export const DEFAULT_IMAGE_TOKEN_BOUND = 2048;

/** How to count a prompt: tokens of a piece of text, and tokens of framing per message. */
export interface PromptMeasure {
  text: (text: string) => number;
  perMessage: number;
}

/**
 * Walks every part of a request that reaches the model's prompt once, O(bytes): message text and
 * text parts, tool-call ids, names and arguments, tool-result ids, tool definitions and an object
 * `tool_choice` as JSON, the strings of other part types (file data and the like), plus
 * `perMessage` per message and `image_token_bound` (default 2,048) per image part. Capped at
 * `context_tokens` when the model sets it.
 */
export function measurePrompt(request: ChatRequest, model: ChatModelConfig, measure: PromptMeasure): number {
  const imageBound = model.image_token_bound ?? DEFAULT_IMAGE_TOKEN_BOUND;
  let tokens = 0;
  for (const message of request.messages) tokens += measure.perMessage + messageTokens(message, imageBound, measure.text);
  // Tool definitions are small; their JSON spelling is what the provider renders into the prompt.
  if (request.tools !== undefined) tokens += measure.text(JSON.stringify(request.tools));
  if (typeof request.tool_choice === 'object') tokens += measure.text(JSON.stringify(request.tool_choice));
  if (model.context_tokens !== undefined && tokens > model.context_tokens) return model.context_tokens;
  return tokens;
}

function messageTokens(message: ChatMessage, imageBound: number, text: (text: string) => number): number {
  let tokens = 0;
  const content = message.content;
  if (typeof content === 'string') tokens += text(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') tokens += text(part.text);
      else if (part.type === 'image_url') tokens += imageBound;
      // Files, audio, video: their inline data is far more characters than the tokens they become.
      else tokens += deep(part, text);
    }
  }
  if (message.role === 'assistant' && message.tool_calls !== undefined) {
    for (const call of message.tool_calls) tokens += text(call.id ?? '') + text(call.function.name) + text(call.function.arguments);
  }
  if (message.role === 'tool' && message.tool_call_id !== undefined) tokens += text(message.tool_call_id);
  return tokens;
}

/** Tokens of every string (object keys included) inside a JSON-like value, without serialising it. */
function deep(value: unknown, text: (text: string) => number): number {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) {
    let tokens = 0;
    for (const item of value) tokens += deep(item, text);
    return tokens;
  }
  if (value !== null && typeof value === 'object') {
    let tokens = 0;
    for (const [key, item] of Object.entries(value)) tokens += text(key) + deep(item, text);
    return tokens;
  }
  // Numbers and booleans: a generous fixed bound for their JSON spelling.
  return value === null || value === undefined ? 0 : 24;
}
