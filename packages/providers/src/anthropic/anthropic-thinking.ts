import type { ReasoningEffort } from '@tollgate/core';

/** Anthropic's smallest accepted thinking budget. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

/**
 * `reasoning_effort` -> extended-thinking `budget_tokens` (docs/providers.md has the table).
 * `none` turns thinking off; `minimal` is the smallest budget Anthropic accepts.
 */
export const ANTHROPIC_THINKING_BUDGETS: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 1024,
  low: 1024,
  medium: 4096,
  high: 16384,
  xhigh: 32768,
};

/** What the thinking decision depends on. */
export interface AnthropicThinkingInput {
  effort: ReasoningEffort | undefined;
  maxTokens: number;
  /** tool_choice forces a tool: Anthropic refuses thinking with `any` / `tool`. */
  forcesTool: boolean;
  /** The conversation continues a tool loop whose signed thinking blocks we cannot send back. */
  inToolLoop: boolean;
}

/**
 * The `thinking` field for a request, or undefined for none. The budget must stay below
 * `max_tokens` (thinking counts towards it), so it is lowered to `max_tokens - 1`; below
 * Anthropic's minimum of 1024 thinking is left off rather than refused.
 */
export function anthropicThinking(input: AnthropicThinkingInput): { type: 'enabled'; budget_tokens: number } | undefined {
  if (input.effort === undefined || input.forcesTool || input.inToolLoop) return undefined;
  const budget = Math.min(ANTHROPIC_THINKING_BUDGETS[input.effort], input.maxTokens - 1);
  if (budget < ANTHROPIC_MIN_THINKING_BUDGET) return undefined;
  return { type: 'enabled', budget_tokens: budget };
}
