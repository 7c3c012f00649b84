import { fakeAnthropic, fakeGemini } from '@tollgate/testing';
import { anthropic } from './anthropic/index';
import { runProviderConformance } from './conformance.case.test';
import { gemini } from './gemini/index';

const noSleep = async () => {};

runProviderConformance('anthropic', (options = {}) => {
  const fake = fakeAnthropic({
    apiKey: 'sk-ant-conformance-key',
    ...(options.reply !== undefined ? { reply: options.reply } : {}),
    ...(options.toolCalls ? { toolCalls: options.toolCalls } : {}),
    ...(options.cachedTokens !== undefined ? { cacheReadTokens: options.cachedTokens } : {}),
    ...(options.thinking !== undefined ? { thinking: options.thinking } : {}),
    sleep: noSleep,
  });
  return {
    provider: anthropic({ baseURL: 'http://fake/v1', apiKey: 'sk-ant-conformance-key', fetch: fake.fetch }),
    fake,
    upstream: 'claude-sonnet-4-5',
    // Anthropic counts thinking inside output_tokens without reporting it apart.
    reports: { cachedTokens: true, reasoningTokens: false },
  };
});

for (const upstream of ['gemini-2.5-flash', 'gemini-3-pro-preview']) {
  runProviderConformance(`gemini (${upstream})`, (options = {}) => {
    const fake = fakeGemini({
      apiKey: 'AIzaConformanceKey0123456789',
      ...(options.reply !== undefined ? { reply: options.reply } : {}),
      ...(options.toolCalls ? { toolCalls: options.toolCalls } : {}),
      ...(options.cachedTokens !== undefined ? { cachedTokens: options.cachedTokens } : {}),
      ...(options.thinking !== undefined ? { thinking: options.thinking } : {}),
      sleep: noSleep,
    });
    return {
      provider: gemini({ baseURL: 'http://fake/v1beta', apiKey: 'AIzaConformanceKey0123456789', fetch: fake.fetch }),
      fake,
      upstream,
      reports: { cachedTokens: true, reasoningTokens: true },
    };
  });
}
