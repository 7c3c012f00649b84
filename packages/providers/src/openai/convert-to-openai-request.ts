import type { ProviderChatRequest } from '../provider';

/**
 * The upstream body of a chat request: the normalised request with the provider's model name.
 * Streams always ask for usage, whatever the client asked: billing needs it; the gateway strips
 * the usage chunk when the client did not want it.
 */
export function convertToOpenAIRequest(request: ProviderChatRequest, upstream: string, stream: boolean): Record<string, unknown> {
  const { model: _model, stream: _stream, stream_options: _options, ...rest } = request;
  const body: Record<string, unknown> = { model: upstream, ...rest, stream };
  if (stream) body.stream_options = { include_usage: true };
  return body;
}
