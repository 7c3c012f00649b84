import { fakeOpenAI } from '@tollgate/testing';
import { runProviderConformance } from '../conformance.case.test';
import { openaiCompatible } from './openai-compatible';

runProviderConformance('openai-compatible', (options = {}) => {
  const fake = fakeOpenAI({
    apiKey: 'sk-openai-conformance-key',
    ...(options.reply !== undefined ? { reply: options.reply } : {}),
    ...(options.toolCalls ? { toolCalls: options.toolCalls } : {}),
    ...(options.cachedTokens !== undefined ? { cachedTokens: options.cachedTokens } : {}),
    ...(options.thinking !== undefined ? { thinking: options.thinking } : {}),
    sleep: async () => {},
  });
  return {
    provider: openaiCompatible({ baseURL: 'http://fake/v1', apiKey: 'sk-openai-conformance-key', fetch: fake.fetch }),
    fake,
    upstream: 'gpt-4o-mini',
    reports: { cachedTokens: true, reasoningTokens: true },
  };
});
