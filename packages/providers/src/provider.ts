import type { ChatCompletion, ChatCompletionChunk, ChatRequest, ErrorCode, Usage } from '@tollgate/core';
import type { ResolvedImageRequest } from '@tollgate/validator';

/** Settings every provider factory takes. */
export interface ProviderSettings {
  /** The upstream's base address, e.g. `https://api.openai.com/v1`. */
  baseURL?: string;
  /** The provider credential; never logged, never sent to a client. */
  apiKey?: string;
  /** Extra headers for every upstream request. */
  headers?: Record<string, string>;
  /** A faster transport than the global `fetch`, or a fake in tests. */
  fetch?: typeof globalThis.fetch;
  /** The operator's statement that this provider confirms zero data retention. */
  zeroDataRetention?: boolean;
  /** Verifies the provider's attested endpoint; throws when it cannot. Required for `tee` models. */
  attest?: () => Promise<void>;
  /**
   * The upstream also serves OpenAI's Responses API (`POST {baseURL}/responses`): the gateway's
   * `/v1/responses` is then passed through to it rather than translated from chat
   * (`openaiCompatible` only; docs/providers.md).
   */
  responsesApi?: boolean;
}

/** Per-call options. */
export interface CallOptions {
  /** The provider's own model name. */
  upstream: string;
  /** Aborts the upstream request (client gone, deadline). */
  signal?: AbortSignal;
}

/**
 * A chat request as providers take it: the normalised request with the output limit resolved.
 */
export interface ProviderChatRequest extends ChatRequest {
  max_completion_tokens: number;
}

/**
 * A streamed chat: OpenAI-shaped chunks. The last chunk carries `usage` (and empty `choices`)
 * whenever the upstream reports usage. The stream errors with a {@link ProviderError} when the
 * upstream fails after it started. Cancelling the stream aborts the upstream request.
 */
export type ChatStream = ReadableStream<ChatCompletionChunk>;

/**
 * One batch of chunks. `texts[i]`, where present, is the JSON text chunk `i` was parsed from,
 * untouched: the gateway splices its own fields into it rather than serialise the chunk again
 * (packages/gateway/src/chat-sse-format.ts). Only an adapter's own batches carry texts; chunks that
 * passed through a `chatStream` never do, so a wrapper that edits them is always serialised.
 */
export type ChunkBatch<T> = T[] & { texts?: (string | undefined)[] };

/**
 * A stream's chunks in batches, with no web stream: each read answers the chunks of what one
 * upstream read brought (never an empty batch), or undefined at the end, and rejects as the
 * stream would error. One read at a time. `cancel` lets the upstream go, as cancelling the stream
 * does; every read after it answers the end.
 */
export interface ChunkBatches<T> {
  read(): Promise<ChunkBatch<T> | undefined>;
  cancel(): Promise<void>;
  /**
   * The next batch if the upstream's bytes read so far make one, the end, or `null` when the
   * upstream must be waited for (`whenReadable`); throws what `read` would reject with. Offered
   * where no promise is needed per read (the adapters' batches on @tollgate/node's upstream replies).
   */
  readNow?(): ChunkBatch<T> | undefined | null;
  /** Calls `wake` once, when `readNow` may answer something new; one waiter at a time. */
  whenReadable?(wake: () => void): void;
}

/**
 * A pass-through reply for `tee` models: the upstream's bytes, unchanged, read on the side for
 * billing. `usage` resolves when the body ends, errors or is cancelled, with the usage seen by
 * then (undefined when the upstream reported none). `delivered()` is the text passed on so far —
 * content and tool-call arguments of the events already in `body` (of a whole reply: its message
 * content and arguments, once read to its end) — which the gateway charges by estimate when there
 * is no usage; a provider without it is charged the prompt only on such replies.
 */
export interface RawReply {
  status: number;
  contentType: string;
  body: ReadableStream<Uint8Array>;
  usage: Promise<Usage | undefined>;
  /** The content and tool-call arguments passed on in `body` so far. */
  delivered?: () => string;
}

/** An image generation request as providers take it: the validator's resolved request (reference images are base64 data URLs). */
export type ProviderImageRequest = ResolvedImageRequest;

/** One generated image. */
export interface GeneratedImage {
  b64_json: string;
  mime_type: string;
}

/** One search result. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  published_at?: string;
}

/** What every provider object has, whatever kinds of model it serves. */
export interface ProviderBase {
  /** The adapter family, for logs: `openai-compatible`, `anthropic`, `gemini`, `searxng`, `brave`. */
  readonly kind: string;
  /** The operator's statement that this provider confirms zero data retention. */
  readonly zeroDataRetention: boolean;
  /** Verifies the attested endpoint (tee models); throws when it cannot. */
  readonly attest?: () => Promise<void>;
}

/**
 * A provider of chat models (the AI SDK's `languageModel`): whole and streamed completions. Methods
 * throw {@link ProviderError} on upstream failure; they never put an upstream body or a credential
 * in the error.
 */
export interface ChatProvider extends ProviderBase {
  /** A whole chat completion. */
  chat(request: ProviderChatRequest, options: CallOptions): Promise<ChatCompletion>;
  /** A streamed chat completion; resolves once the upstream accepted the request (status 200). */
  chatStream(request: ProviderChatRequest, options: CallOptions): Promise<ChatStream>;
  /**
   * The same stream as `chatStream`, as batches of chunks (one per upstream read) with no web
   * stream between. The gateway reads it only while `chatStream` is the one `chatStreamOf` made
   * from it (a wrapper that replaces `chatStream` is read through its `chatStream`). Optional; the
   * adapters of this package have it.
   */
  chatBatches?(request: ProviderChatRequest, options: CallOptions): Promise<ChunkBatches<ChatCompletionChunk>>;
}

/** A chat provider that can also pass an attested server's reply through unchanged (`tee` models). */
export interface PassThroughChatProvider extends ChatProvider {
  /** Tee pass-through: the upstream's reply bytes unchanged, usage read on the side. */
  chatRaw(request: ProviderChatRequest, options: CallOptions): Promise<RawReply>;
}

/** A provider of image models (the AI SDK's `imageModel`). */
export interface ImageProvider extends ProviderBase {
  /** Image generation; returns the delivered images. */
  images(request: ProviderImageRequest, options: CallOptions): Promise<GeneratedImage[]>;
  /**
   * Whether `images` sends the request's reference images to the model (Gemini does; an
   * OpenAI-compatible generations endpoint takes none). Absent is false: a model that takes
   * references (`max_reference_images` above 0) cannot route here, since they would be paid for
   * and never seen.
   */
  readonly referenceImages?: boolean;
}

/** A provider of web search. */
export interface SearchProvider extends ProviderBase {
  /** Web search: at most `max_results` results are asked for (the gateway cuts any extra). */
  search(request: { query: string; max_results: number }, options: CallOptions): Promise<SearchResult[]>;
}

/**
 * A provider object as the gateway's `providers` takes it: it serves one kind of model or several
 * (`openaiCompatible` serves chat, pass-through and images). `createGateway` checks that each
 * model's routes name providers of the model's kind, and throws a configuration error otherwise.
 */
export type Provider = ChatProvider | ImageProvider | SearchProvider;

/** Options of a {@link ProviderError}. */
export interface ProviderErrorOptions {
  /** Seconds to wait, carried from the upstream's Retry-After. */
  retryAfter?: number;
  /**
   * Whether the upstream may have accepted (and started working on) the request. False only for
   * failures that prove it did not: connection refused, DNS failure, 429/529/503 overload or
   * unavailability answered before any work. Failover to the next route happens only when false.
   */
  accepted: boolean;
  /** The upstream HTTP status, when there was one (for logs; never sent to a client). */
  status?: number;
}

/**
 * An upstream failure mapped to a code of the spec's catalogue (docs/http-api.md, Errors): context_length_exceeded,
 * content_filter, invalid_request, request_too_large, upstream_busy, upstream_unavailable, upstream_error.
 */
export class ProviderError extends Error {
  readonly code: ErrorCode;
  readonly retryAfter: number | undefined;
  readonly accepted: boolean;
  readonly status: number | undefined;

  constructor(code: ErrorCode, options: ProviderErrorOptions) {
    super(`upstream failed: ${code}${options.status ? ` (status ${options.status})` : ''}`);
    this.name = 'ProviderError';
    this.code = code;
    this.retryAfter = options.retryAfter;
    this.accepted = options.accepted;
    this.status = options.status;
  }
}
