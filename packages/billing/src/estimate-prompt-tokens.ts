import type { ChatRequest, ChatModelConfig } from '@tollgate/core';
import { estimateCompletionTokens } from './estimate-completion-tokens';
import { measurePrompt } from './measure-prompt';

/** Tokens the estimate counts for each message's role and framing. */
export const ESTIMATED_MESSAGE_TOKENS = 4;

const ESTIMATE = { text: estimateCompletionTokens, perMessage: ESTIMATED_MESSAGE_TOKENS };

/**
 * An estimate of a request's prompt tokens for a stream that stopped before the provider reported
 * usage: the same parts as `promptTokenBound`, text counted by the `estimateCompletionTokens` rule
 * (ceil(ASCII characters / 4) + 1 per other code point, per piece of text), 4 per message, and
 * `image_token_bound` (default 2,048) per image part, capped at `context_tokens`. Never more than
 * `promptTokenBound`, so it never charges past what the bound held for the prompt.
 *
 * @example
 * const promptTokens = usage?.prompt_tokens ?? estimatePromptTokens(request, model);
 */
export function estimatePromptTokens(request: ChatRequest, model: ChatModelConfig): number {
  return measurePrompt(request, model, ESTIMATE);
}
