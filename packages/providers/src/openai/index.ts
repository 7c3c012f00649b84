export { openaiCompatible } from './openai-compatible';
export type { OpenAICompatibleProvider } from './openai-compatible';
export { mapOpenAIError } from './map-openai-error';
export { openaiResponses } from './openai-responses';
export type { ResponsesPassThrough, UpstreamResponsesRequest } from './openai-responses';
export type { ResponsesWireEvent } from './openai-responses-stream';
