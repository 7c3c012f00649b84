export { ProviderError } from './provider';
export { batchesOfReader, streamOfBatches } from './http/open-upstream-stream';
export type {
  CallOptions,
  ChatProvider,
  ChatStream,
  ChunkBatches,
  GeneratedImage,
  ImageProvider,
  PassThroughChatProvider,
  Provider,
  ProviderBase,
  ProviderChatRequest,
  ProviderErrorOptions,
  ProviderImageRequest,
  ProviderSettings,
  RawReply,
  SearchProvider,
  SearchResult,
} from './provider';
export * from './openai/index';
export * from './anthropic/index';
export * from './gemini/index';
export * from './search/index';
export * from './fetch/index';
export * from './images/index';
export * from './responses/index';
