import type { Usage } from '@tollgate/core';
import { estimateCompletionTokens, estimatePromptTokens } from '@tollgate/billing';
import type { ProviderChatRequest } from '@tollgate/providers';
import type { ChatModel } from './model-catalogue';

/**
 * The usage a chat reply shows: the provider's when well formed, else the estimate the request is
 * billed on (the prompt estimate and the delivered text's), with the charge as `cost_micros` when given.
 *
 * @example
 * const usage = billedUsage(model, request, readUsage(completion.usage), text, charge.quote(completion.usage, text));
 */
export function billedUsage(model: ChatModel, request: ProviderChatRequest, reported: Usage | undefined, deliveredText: string, costMicros?: number): Usage {
  const usage = reported ?? estimatedUsage(model, request, deliveredText);
  return costMicros === undefined ? usage : { ...usage, cost_micros: costMicros };
}

/** The estimate chatCharge bills when no usage was reported (docs/architecture.md, Billing). */
function estimatedUsage(model: ChatModel, request: ProviderChatRequest, deliveredText: string): Usage {
  const prompt = estimatePromptTokens(request, model.config);
  const completion = estimateCompletionTokens(deliveredText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
