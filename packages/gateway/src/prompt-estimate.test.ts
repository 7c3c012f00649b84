/**
 * What an open stream keeps of its request: the prompt's estimate is measured when the stream
 * starts, and from then on nothing the stream keeps (its delivered cost, its charge, its usage
 * fallback) holds the request or its prompt text (docs/architecture.md, "What an open stream keeps").
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { chatCostMicros, estimatePromptTokens, promptTokenBound } from '@tollgate/billing';
import type { ChatModelConfig } from '@tollgate/core';
import type { ProviderChatRequest } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { billedUsage } from './billed-usage';
import { chatDeliveredCost } from './chat-delivered-cost';
import type { ChatModel } from './model-catalogue';
import { PromptEstimate } from './prompt-estimate';

const price = { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 2_000_000, min_hold_micros: 50 };
const config: ChatModelConfig = { id: 'fast', type: 'chat', provider: 'local', max_output_tokens: 1_000, price };
const model: ChatModel = { config, id: 'fast', plan: 'free', routes: [], zdr: false, price, tee: undefined };

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A full garbage collection (the flag set at run time, as @tollgate/node's releaseMemoryWhenIdle does). */
async function collect(): Promise<void> {
  // A WeakRef keeps its target alive until the job that made it ends: collect in a later one.
  await nextTurn();
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  await nextTurn();
}

function request(text: string): ProviderChatRequest {
  return { model: 'fast', stream: true, messages: [{ role: 'user', content: text }], max_completion_tokens: 100 };
}

describe('PromptEstimate', () => {
  it('is estimatePromptTokens, measured on the first call and the same on every later one', () => {
    const chat = request('Tell me a story about a lighthouse keeper, please.');
    const prompt = new PromptEstimate(chat, config);
    const expected = estimatePromptTokens(chat, config);
    expect(prompt.tokens()).toBe(expected);
    chat.messages.push({ role: 'user', content: 'a later change is not measured' });
    expect(prompt.tokens()).toBe(expected);
  });

  it('lets go of the request once measured, and a stream’s delivered cost measures it when made', async () => {
    const made = () => {
      const chat = request(`a long prompt ${'x'.repeat(64 * 1024)}`);
      const prompt = new PromptEstimate(chat, config);
      const cost = chatDeliveredCost(model, { request: chat, promptBound: promptTokenBound(chat, config), prompt, full: 0 });
      return { cost, prompt, tokens: estimatePromptTokens(chat, config), held: new WeakRef(chat) };
    };
    const { cost, prompt, tokens, held } = made();
    await collect();
    // The cost, the estimate (and through them a usage fallback and a charge) are alive; the request is not.
    expect(held.deref()).toBeUndefined();
    expect(cost('Hi there')).toBe(chatCostMicros(price, { prompt_tokens: tokens, completion_tokens: 2 }));
    expect(billedUsage(prompt, undefined, 'Hi there')).toEqual({ prompt_tokens: tokens, completion_tokens: 2, total_tokens: tokens + 2 });
  });

  it('keeps the request until it is measured', async () => {
    const made = () => {
      const chat = request('not measured yet');
      return { prompt: new PromptEstimate(chat, config), held: new WeakRef(chat) };
    };
    const { prompt, held } = made();
    await collect();
    expect(held.deref()).toBeDefined();
    expect(prompt.tokens()).toBeGreaterThan(0);
  });
});
