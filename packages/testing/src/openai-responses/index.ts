export { fakeOpenAIResponses } from './fake-openai-responses';
export type { FakeOpenAIResponsesOptions } from './fake-openai-responses';
