import type { Usage } from '@tollgate/core';
import type { GeminiUsageMetadata } from './gemini-api';

/**
 * Maps Gemini usage to OpenAI usage. The prompt count already includes cached tokens; tool-use
 * prompt tokens are billed as prompt too. Thoughts are billed as output, so the completion is
 * candidates + thoughts and the thoughts are the reasoning tokens.
 */
export function mapGeminiUsage(usage: GeminiUsageMetadata): Usage {
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const reasoning = usage.thoughtsTokenCount ?? 0;
  const completion = (usage.candidatesTokenCount ?? 0) + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}
