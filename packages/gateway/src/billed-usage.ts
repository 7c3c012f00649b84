import type { Usage } from '@tollgate/core';
import { estimateCompletionTokens } from '@tollgate/billing';
import type { PromptEstimate } from './prompt-estimate';

/**
 * The usage a chat reply shows: the provider's when well formed, else the estimate the request is
 * billed on (the prompt estimate and the delivered text's), with the charge as `cost_micros` when given.
 *
 * @example
 * const usage = billedUsage(prepared.prompt, readUsage(completion.usage), text, charge.quote(completion.usage, text));
 */
export function billedUsage(prompt: PromptEstimate, reported: Usage | undefined, deliveredText: string, costMicros?: number): Usage {
  const usage = reported ?? estimatedUsage(prompt, deliveredText);
  return costMicros === undefined ? usage : { ...usage, cost_micros: costMicros };
}

/** The estimate chatCharge bills when no usage was reported (docs/architecture.md, Billing). */
function estimatedUsage(prompt: PromptEstimate, deliveredText: string): Usage {
  const promptTokens = prompt.tokens();
  const completion = estimateCompletionTokens(deliveredText);
  return { prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion };
}
