import { type ImageProvider, type PassThroughChatProvider, ProviderError, type ProviderSettings } from '../provider';
import { convertToOpenAIRequest } from './convert-to-openai-request';
import { isOpenAIChatCompletion } from './openai-api';
import { convertToOpenAIImageRequest, readOpenAIImages } from './openai-images';
import { openaiChatStream } from './openai-chat-stream';
import { openaiRawReply } from './openai-raw-reply';
import { abortReason, type JsonTarget } from '../http/post-json';
import { postOpenAI } from './post-openai';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * A provider for any OpenAI-compatible upstream: chat (`/chat/completions`, whole, streamed, and
 * raw pass-through for tee models) and images (`/images/generations`).
 *
 * @example
 * const local = openaiCompatible({ baseURL: 'http://127.0.0.1:8000/v1', apiKey: process.env.KEY });
 * const stream = await local.chatStream(request, { upstream: 'gpt-4o-mini', signal });
 */
export function openaiCompatible(settings: ProviderSettings = {}): PassThroughChatProvider & ImageProvider {
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
      return await call.response.json();
    } catch {
      if (signal?.aborted) throw abortReason(signal);
      throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
    } finally {
      call.unlink();
    }
  }

  const provider: PassThroughChatProvider & ImageProvider = {
    kind: 'openai-compatible',
    zeroDataRetention: settings.zeroDataRetention ?? false,

    async chat(request, options) {
      const call = await postOpenAI(chatTarget, convertToOpenAIRequest(request, options.upstream, false), options.signal);
      const body = await readJson(call, options.signal);
      // A reply that is not a chat completion where Tollgate reads one is the spec's upstream error.
      if (!isOpenAIChatCompletion(body)) throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
      return body;
    },

    async chatStream(request, options) {
      const call = await postOpenAI(streamTarget, convertToOpenAIRequest(request, options.upstream, true), options.signal);
      if (!call.response.body) {
        call.unlink();
        throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
      }
      return openaiChatStream(call, options.signal);
    },

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
  if (settings.attest) return { ...provider, attest: settings.attest };
  return provider;
}
