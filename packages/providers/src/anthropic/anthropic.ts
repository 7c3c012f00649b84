import type { ChatCompletion } from '@tollgate/core';
import { ProviderError, type CallOptions, type ChatProvider, type ProviderChatRequest, type ProviderSettings } from '../provider';
import { chatStreamOf } from '../http/chunk-batches';
import { openUpstreamStream } from '../http/open-upstream-stream';
import { postJson, type JsonTarget } from '../http/post-json';
import { checkReply } from '../http/check-reply';
import { readJsonReply } from '../http/read-json-reply';
import { anthropicReplySchema } from './anthropic-api';
import { anthropicSteps } from './anthropic-stream';
import { convertToAnthropicRequest } from './convert-to-anthropic-request';
import { mapAnthropicResponse } from './map-anthropic-response';
import { mapAnthropicError } from './map-anthropic-error';

/** The Messages API version header every request carries. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * An adapter for the Anthropic Messages API (`POST {baseURL}/messages`): chat and chatStream, with
 * OpenAI-shaped input and output. Errors are mapped as docs/providers.md describes.
 * @example
 * const provider = anthropic({ apiKey: process.env.ANTHROPIC_API_KEY });
 * const reply = await provider.chat(request, { upstream: 'claude-sonnet-4-5' });
 */
export function anthropic(settings: ProviderSettings = {}): ChatProvider {
  const baseURL = (settings.baseURL ?? 'https://api.anthropic.com/v1').replace(/\/+$/, '');
  const transport: JsonTarget = {
    url: `${baseURL}/messages`,
    headers: {
      'content-type': 'application/json',
      'anthropic-version': ANTHROPIC_VERSION,
      ...settings.headers,
      ...(settings.apiKey ? { 'x-api-key': settings.apiKey } : {}),
    },
    fetch: settings.fetch ?? ((input, init) => globalThis.fetch(input, init)),
  };

  function body(request: ProviderChatRequest, options: CallOptions, stream: boolean) {
    const converted = convertToAnthropicRequest(request, options.upstream);
    // A request we cannot translate never left: another route may take it.
    if (!converted.ok) throw new ProviderError('invalid_request', { accepted: false });
    return stream ? { ...converted.request, stream: true } : converted.request;
  }

  const chatBatches = async (request: ProviderChatRequest, options: CallOptions) => {
    const payload = body(request, options, true);
    return openUpstreamStream(options.signal, (signal) => postJson(transport, payload, signal, mapAnthropicError), anthropicSteps());
  };

  return {
    kind: 'anthropic',
    zeroDataRetention: settings.zeroDataRetention ?? false,
    ...(settings.attest ? { attest: settings.attest } : {}),

    async chat(request, options): Promise<ChatCompletion> {
      const response = await postJson(transport, body(request, options, false), options.signal, mapAnthropicError);
      let reply: unknown;
      try {
        reply = await readJsonReply(response);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new ProviderError('upstream_error', { accepted: true, status: response.status });
      }
      return mapAnthropicResponse(checkReply(anthropicReplySchema, reply, response.status));
    },

    chatStream: chatStreamOf(chatBatches),
    chatBatches,
  };
}
