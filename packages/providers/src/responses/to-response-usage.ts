import type { ResponseUsage, Usage } from '@tollgate/core';

/**
 * Chat usage in the Responses form. Every provider family's chat translation already reports its
 * cached prompt tokens and reasoning tokens in the chat usage (see
 * `packages/providers/src/anthropic/map-anthropic-usage.ts` and
 * `packages/providers/src/gemini/map-gemini-usage.ts`), so this one mapping serves them all; a
 * count the provider did not report is 0, as OpenAI reports it.
 */
export function toResponseUsage(usage: Usage): ResponseUsage {
  const mapped: ResponseUsage = {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
  // The gateway's charge, when it set one (docs/http-api.md, Billing), travels with the counts.
  if (usage.cost_micros !== undefined) mapped.cost_micros = usage.cost_micros;
  return mapped;
}
