import type { ChatCompletion } from '@tollgate/core';
import { chatStreamOf } from '../http/chunk-batches';
import { openUpstreamStream } from '../http/open-upstream-stream';
import { ProviderError, type CallOptions, type ChatProvider, type ImageProvider, type ProviderChatRequest, type ProviderSettings } from '../provider';
import { geminiImages } from './gemini-images';
import { geminiSteps } from './gemini-stream';
import { convertToGeminiRequest } from './convert-to-gemini-request';
import { mapGeminiResponse } from './map-gemini-response';
import { geminiUrl, postGemini, readGeminiReply, type GeminiTransport } from './post-gemini';

/**
 * An adapter for the Gemini API: chat (`generateContent`), chatStream
 * (`streamGenerateContent?alt=sse`) and images (`generateContent` with IMAGE output), with
 * OpenAI-shaped input and output. Errors are mapped as docs/providers.md describes.
 * @example
 * const provider = gemini({ apiKey: process.env.GEMINI_API_KEY });
 * const reply = await provider.chat(request, { upstream: 'gemini-2.5-flash' });
 */
export function gemini(settings: ProviderSettings = {}): ChatProvider & ImageProvider {
  const transport: GeminiTransport = {
    baseURL: (settings.baseURL ?? 'https://generativelanguage.googleapis.com/v1beta').replace(/\/+$/, ''),
    headers: { 'content-type': 'application/json', ...settings.headers, ...(settings.apiKey ? { 'x-goog-api-key': settings.apiKey } : {}) },
    fetch: settings.fetch ?? ((input, init) => globalThis.fetch(input, init)),
  };

  function body(request: ProviderChatRequest, options: CallOptions) {
    const converted = convertToGeminiRequest(request, options.upstream);
    // A request we cannot translate never left: another route may take it.
    if (!converted.ok) throw new ProviderError('invalid_request', { accepted: false });
    return converted.request;
  }

  const chatBatches = async (request: ProviderChatRequest, options: CallOptions) => {
    const url = `${geminiUrl(transport, options.upstream, 'streamGenerateContent')}?alt=sse`;
    const payload = body(request, options);
    return openUpstreamStream(options.signal, (signal) => postGemini(transport, url, payload, signal), geminiSteps());
  };

  return {
    kind: 'gemini',
    zeroDataRetention: settings.zeroDataRetention ?? false,
    referenceImages: true,
    ...(settings.attest ? { attest: settings.attest } : {}),

    async chat(request, options): Promise<ChatCompletion> {
      const url = geminiUrl(transport, options.upstream, 'generateContent');
      const response = await postGemini(transport, url, body(request, options), options.signal);
      return mapGeminiResponse(await readGeminiReply(response, options.signal));
    },

    chatStream: chatStreamOf(chatBatches),
    chatBatches,

    images(request, options) {
      return geminiImages(transport, request, options);
    },
  };
}
