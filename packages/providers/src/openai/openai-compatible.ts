import {
  type CallOptions,
  type ImageProvider,
  type PassThroughChatProvider,
  ProviderError,
  type ProviderChatRequest,
  type ProviderSettings,
} from '../provider';
import { convertToOpenAIRequest } from './convert-to-openai-request';
import { isOpenAIChatCompletion } from './openai-api';
import { convertToOpenAIImageRequest, readOpenAIImages } from './openai-images';
import { openaiChatBatches } from './openai-chat-stream';
import { chatStreamOf } from '../http/chunk-batches';
import { openaiRawReply } from './openai-raw-reply';
import { openaiResponses, type ResponsesPassThrough } from './openai-responses';
import { abortReason, type JsonTarget } from '../http/post-json';
import { postOpenAI } from './post-openai';
import { readJsonReply } from '../http/read-json-reply';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** An OpenAI-compatible provider: chat (with the tee pass-through) and images. */
export type OpenAICompatibleProvider = PassThroughChatProvider & ImageProvider;

/**
 * A provider for any OpenAI-compatible upstream: chat (`/chat/completions`, whole, streamed, and
 * raw pass-through for tee models) and images (`/images/generations`). With `responsesApi: true`
 * it also has the native Responses calls (`/responses`), which the gateway's `/v1/responses`
 * passes through instead of translating chat.
 *
 * @example
 * const local = openaiCompatible({ baseURL: 'http://127.0.0.1:8000/v1', apiKey: process.env.KEY });
 * const stream = await local.chatStream(request, { upstream: 'gpt-4o-mini', signal });
 * const native = openaiCompatible({ apiKey: process.env.OPENAI_API_KEY, responsesApi: true });
 */
export function openaiCompatible(settings: ProviderSettings & { responsesApi: true }): OpenAICompatibleProvider & ResponsesPassThrough;
export function openaiCompatible(settings?: ProviderSettings): OpenAICompatibleProvider;
export function openaiCompatible(settings: ProviderSettings = {}): OpenAICompatibleProvider | (OpenAICompatibleProvider & ResponsesPassThrough) {
  const baseURL = (settings.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const fetch = settings.fetch ?? globalThis.fetch.bind(globalThis);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...settings.headers };
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
  const target = (path: string, accept: string): JsonTarget => ({ url: `${baseURL}${path}`, headers: { ...headers, accept }, fetch });
  const chatTarget = target('/chat/completions', 'application/json');
  const streamTarget = target('/chat/completions', 'text/event-stream');
  const imagesTarget = target('/images/generations', 'application/json');

  async function readJson(call: Awaited<ReturnType<typeof postOpenAI>>, signal: AbortSignal | undefined): Promise<unknown> {
    try {
      return await readJsonReply(call.response);
    } catch {
      if (signal?.aborted) throw abortReason(signal);
      throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
    } finally {
      call.unlink();
    }
  }

  const chatBatches = async (request: ProviderChatRequest, options: CallOptions) => {
    const call = await postOpenAI(streamTarget, convertToOpenAIRequest(request, options.upstream, true), options.signal);
    return openaiChatBatches(call, options.signal);
  };

  const provider: OpenAICompatibleProvider = {
    kind: 'openai-compatible',
    zeroDataRetention: settings.zeroDataRetention ?? false,

    async chat(request, options) {
      const call = await postOpenAI(chatTarget, convertToOpenAIRequest(request, options.upstream, false), options.signal);
      const body = await readJson(call, options.signal);
      // A reply that is not a chat completion where Tollgate reads one is the spec's upstream error.
      if (!isOpenAIChatCompletion(body)) throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
      return body;
    },

    chatStream: chatStreamOf(chatBatches),
    chatBatches,

    async chatRaw(request, options) {
      const stream = request.stream === true;
      const call = await postOpenAI(stream ? streamTarget : chatTarget, convertToOpenAIRequest(request, options.upstream, stream), options.signal);
      return openaiRawReply(call, stream, options.signal);
    },

    async images(request, options) {
      const call = await postOpenAI(imagesTarget, convertToOpenAIImageRequest(request, options.upstream), options.signal);
      return readOpenAIImages(await readJson(call, options.signal));
    },
  };
  const attested = settings.attest ? { ...provider, attest: settings.attest } : provider;
  // Only when asked: a provider with these methods is one the gateway sends `/v1/responses` to as it is.
  if (settings.responsesApi) return { ...attested, ...openaiResponses(target('/responses', 'application/json')) };
  return attested;
}
