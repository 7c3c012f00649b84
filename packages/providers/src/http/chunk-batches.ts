import type { ChatCompletionChunk } from '@tollgate/core';
import type { CallOptions, ChatProvider, ChunkBatch, ChunkBatches, ProviderChatRequest } from '../provider';

/**
 * Batches as a web stream of their chunks (what `chatStream` returns): pull-based, one batch read
 * per pull once the chunks of the last one were taken; cancelling the stream cancels the batches.
 */
export function streamOfBatches<T>(batches: ChunkBatches<T>): ReadableStream<T> {
  return new ReadableStream<T>(
    {
      async pull(controller) {
        let batch: ChunkBatch<T> | undefined;
        try {
          batch = await batches.read();
        } catch (error) {
          return controller.error(error);
        }
        if (batch === undefined) return controller.close();
        for (const chunk of batch) controller.enqueue(chunk);
      },
      cancel: () => batches.cancel(),
    },
    { highWaterMark: 0 },
  );
}

/**
 * A reader's chunks as batches of one (a stream that has no batches of its own: a provider without
 * `chatBatches`, a pass-through body); `cancel` cancels the reader.
 */
export function batchesOfReader<T>(reader: ReadableStreamDefaultReader<T>): ChunkBatches<T> {
  return {
    read: () => reader.read().then((read) => (read.done ? undefined : [read.value])),
    cancel: () => reader.cancel(),
  };
}

/** What `chatBatches` is. */
type ChatBatchesMethod = (request: ProviderChatRequest, options: CallOptions) => Promise<ChunkBatches<ChatCompletionChunk>>;

const PAIRED = Symbol('tollgate.chat-batches');

/**
 * A provider's `chatStream` made from its `chatBatches` (the stream of their chunks) and paired
 * with it, so that the gateway reads the batches: see {@link pairedChatBatches}.
 *
 * @example
 * const chatBatches = async (request, options) => openUpstreamStream(options.signal, post, steps());
 * return { kind: 'mine', zeroDataRetention: false, chat, chatBatches, chatStream: chatStreamOf(chatBatches) };
 */
export function chatStreamOf(chatBatches: ChatBatchesMethod): ChatProvider['chatStream'] {
  const chatStream = async (request: ProviderChatRequest, options: CallOptions) => streamOfBatches(await chatBatches(request, options));
  Object.defineProperty(chatStream, PAIRED, { value: chatBatches });
  return chatStream;
}

/**
 * The provider's `chatBatches` while its `chatStream` is the one {@link chatStreamOf} made from
 * it; undefined otherwise — no batches, or a `chatStream` replaced by a wrapper (`{ ...adapter,
 * chatStream: filtered }`), which must be read through its own stream.
 */
export function pairedChatBatches(provider: ChatProvider): ChatBatchesMethod | undefined {
  const batches = provider.chatBatches;
  if (batches === undefined) return undefined;
  return (provider.chatStream as { [PAIRED]?: unknown } | undefined)?.[PAIRED] === batches ? batches : undefined;
}
