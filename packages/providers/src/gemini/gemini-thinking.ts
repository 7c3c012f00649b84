import type { ReasoningEffort } from '@tollgate/core';
import type { GeminiThinkingConfig } from './gemini-api';

/** `reasoning_effort` -> `thinkingBudget` for Gemini 2.5 models (docs/providers.md has the table). */
export const GEMINI_THINKING_BUDGETS: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 512,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
};

/** `reasoning_effort` -> `thinkingLevel` for Gemini 3 models, which take levels, not budgets. */
export const GEMINI_THINKING_LEVELS: Record<ReasoningEffort, 'low' | 'high'> = {
  none: 'low',
  minimal: 'low',
  low: 'low',
  medium: 'high',
  high: 'high',
  xhigh: 'high',
};

/**
 * The `thinkingConfig` for an effort and upstream model, or undefined for the model's default.
 * 2.5 Pro cannot turn thinking off (its floor is 128) and only Pro takes budgets above 24,576.
 */
export function geminiThinking(effort: ReasoningEffort | undefined, upstream: string): GeminiThinkingConfig | undefined {
  if (effort === undefined) return undefined;
  if (usesThinkingLevels(upstream)) return { thinkingLevel: GEMINI_THINKING_LEVELS[effort] };
  const pro = /-pro\b/.test(upstream);
  const budget = GEMINI_THINKING_BUDGETS[effort];
  return { thinkingBudget: pro ? Math.max(128, budget) : Math.min(24576, budget) };
}

/** Gemini 3 and later take `thinkingLevel` and demand thought signatures on replayed calls. */
export function usesThinkingLevels(upstream: string): boolean {
  return !/gemini-(1|2)[.-]/.test(upstream);
}
