export { fakeAnthropic } from './fake-anthropic';
export type { FakeAnthropicOptions } from './fake-anthropic';
export { anthropicErrorResponse } from './anthropic-error-response';
export { validateAnthropicRequest } from './validate-anthropic-request';
export type { AnthropicWireRequest, ValidateAnthropicResult } from './validate-anthropic-request';
export * as anthropicFixtures from './__fixtures__/anthropic-transcripts';
