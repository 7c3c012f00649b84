export * from './openai/index';
export * from './anthropic/index';
export * from './gemini/index';
export * from './search/index';
export * from './images/index';
export * from './openai-responses/index';
