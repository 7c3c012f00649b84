export { ProviderError } from './provider';
export { batchesOfReader, chatStreamOf, pairedChatBatches, streamOfBatches } from './http/chunk-batches';
export type {
  CallOptions,
  ChatProvider,
  ChatStream,
  ChunkBatch,
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
