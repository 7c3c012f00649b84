import { fakeAnthropic } from '@tollgate/testing';
import { anthropic } from './anthropic/index';
import { runProviderConformance } from './conformance.case.test';

runProviderConformance('anthropic', (options = {}) => {
  const fake = fakeAnthropic({
    apiKey: 'sk-ant-conformance-key',
    ...(options.reply !== undefined ? { reply: options.reply } : {}),
    ...(options.toolCalls ? { toolCalls: options.toolCalls } : {}),
    ...(options.cachedTokens !== undefined ? { cacheReadTokens: options.cachedTokens } : {}),
    ...(options.thinking !== undefined ? { thinking: options.thinking } : {}),
    sleep: async () => {},
  });
  return {
    provider: anthropic({ baseURL: 'http://fake/v1', apiKey: 'sk-ant-conformance-key', fetch: fake.fetch }),
    fake,
    upstream: 'claude-sonnet-4-5',
    // Anthropic counts thinking inside output_tokens without reporting it apart.
    reports: { cachedTokens: true, reasoningTokens: false },
  };
});
