import type { Usage } from '@tollgate/core';

/** More tokens than any real request: a larger count is a broken upstream, not a bill. */
const MAX_TOKENS = 1e12;

const count = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= MAX_TOKENS;

/**
 * The upstream's usage when it is well formed (non-negative whole token counts), else undefined
 * so the caller charges the documented estimate. Money is never computed from numbers an upstream
 * got wrong: a missing, negative, fractional or absurd count would otherwise throw in the cost
 * arithmetic (leaving the hold open) or credit the account. A cached count above the prompt is
 * dropped (the prompt is then billed at the prompt price).
 */
export function readUsage(value: unknown): Usage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const raw = value as Record<string, unknown>;
  if (!count(raw.prompt_tokens) || !count(raw.completion_tokens)) return undefined;
  const usage: Usage = {
    prompt_tokens: raw.prompt_tokens,
    completion_tokens: raw.completion_tokens,
    total_tokens: raw.prompt_tokens + raw.completion_tokens,
  };
  const cached = (raw.prompt_tokens_details as Record<string, unknown> | undefined)?.cached_tokens;
  // Cached tokens are a subset of the prompt (billed at the cached price): more is a broken count,
  // dropped so the usage shown agrees with the bill, which then counts every prompt token in full.
  if (count(cached) && cached <= raw.prompt_tokens) usage.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = (raw.completion_tokens_details as Record<string, unknown> | undefined)?.reasoning_tokens;
  if (count(reasoning)) usage.completion_tokens_details = { reasoning_tokens: reasoning };
  return usage;
}
