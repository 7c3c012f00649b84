export { openaiCompatible } from './openai-compatible';
export { mapOpenAIError } from './map-openai-error';
