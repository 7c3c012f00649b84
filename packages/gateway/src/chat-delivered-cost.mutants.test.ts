import { chatCostMicros, estimatePromptTokens, promptTokenBound } from '@tollgate/billing';
import type { ChatModelConfig, ChatPrice } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { chatDeliveredCost } from './chat-delivered-cost';
import type { PreparedChat } from './handle-chat';
import type { ChatModel } from './model-catalogue';
import { PromptEstimate } from './prompt-estimate';

function chat(price: ChatPrice): { model: ChatModel; prepared: PreparedChat } {
  const config: ChatModelConfig = { id: 'fast', type: 'chat', provider: 'local', max_output_tokens: 2_000_000, price };
  const model: ChatModel = { config, id: 'fast', plan: 'free', routes: [], zdr: false, price, tee: undefined };
  const request = { model: 'fast', stream: true, messages: [{ role: 'user' as const, content: 'Hello there' }], max_completion_tokens: 2_000_000 };
  return { model, prepared: { request, promptBound: promptTokenBound(request, config), prompt: new PromptEstimate(request, config), full: 0 } };
}

// What a crash checkpoint records for a chat stream: nothing while no text was delivered (a stream
// cut before its first word pays nothing), then the early-stop price of what was delivered.
describe('chatDeliveredCost', () => {
  it('is 0 before any text was delivered, then the prompt estimate plus the delivered text', () => {
    const price = { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 2_000_000, min_hold_micros: 50 };
    const { model, prepared } = chat(price);
    const cost = chatDeliveredCost(model, prepared);
    expect(cost('')).toBe(0);
    const prompt = Math.min(estimatePromptTokens(prepared.request, model.config), prepared.promptBound);
    expect(cost('Hi there')).toBe(chatCostMicros(price, { prompt_tokens: prompt, completion_tokens: 2 }));
    expect(cost('Hi there')).toBe(prompt * 1 + 2 * 2);
  });

  it('past the safe-integer range it answers the largest safe amount, for the hold to cap', () => {
    const price = { prompt_micros_per_mtok: Number.MAX_SAFE_INTEGER, completion_micros_per_mtok: Number.MAX_SAFE_INTEGER, min_hold_micros: 0 };
    const { model, prepared } = chat(price);
    // 1,000,002 tokens at the largest price pass 2^53 micro-dollars.
    expect(chatDeliveredCost(model, prepared)('a'.repeat(4_000_008))).toBe(Number.MAX_SAFE_INTEGER);
  });
});
