import type { Usage } from '@tollgate/core';
import type { AnthropicUsage } from './anthropic-api';

/**
 * Maps Anthropic usage to OpenAI usage. Anthropic's `input_tokens` excludes cache reads and cache
 * writes, which are billed as prompt too, so the prompt is their sum; cache reads are the cached
 * tokens. Thinking tokens are inside `output_tokens` and not reported apart, so no reasoning count.
 */
export function mapAnthropicUsage(usage: AnthropicUsage): Usage {
  const cached = usage.cache_read_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + cached + (usage.cache_creation_input_tokens ?? 0);
  const completion = usage.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached },
  };
}
