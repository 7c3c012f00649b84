import { mulDivCeil, type ChatPrice } from '@tollgate/core';

/**
 * The most a chat request could cost, which is what it holds:
 * max(min_hold_micros, ceil(prompt x prompt price / 1e6) + ceil(output x completion price / 1e6)).
 *
 * @example
 * const micros = chatHoldMicros(model.price, promptTokenBound(request, model), outputLimit);
 */
export function chatHoldMicros(price: ChatPrice, promptTokens: number, outputTokens: number): number {
  const prompt = mulDivCeil(promptTokens, price.prompt_micros_per_mtok, 1_000_000);
  const output = mulDivCeil(outputTokens, price.completion_micros_per_mtok, 1_000_000);
  return Math.max(price.min_hold_micros, prompt + output);
}
