import type { ProviderChatRequest } from '../provider';

/** The sampling fields of a Messages API body, or why the request cannot be sent. */
export type AnthropicSamplingResult = { ok: true; fields: { temperature?: number; top_p?: number } } | { ok: false; message: string };

/**
 * The Messages API's share of the Responses-only request fields (see
 * `packages/validator/src/parse-responses-request.ts`): `temperature` (Anthropic takes 0 to 1, so
 * higher values are lowered to 1) and `top_p` as they are. With extended thinking on, the API
 * refuses both, so they are not sent then (the model's sampling under thinking is fixed). A
 * structured output (`response_format`) has no Messages API equivalent here and is refused before
 * anything is sent, which lets the gateway try the model's next route.
 */
export function anthropicSampling(request: ProviderChatRequest, thinking: boolean): AnthropicSamplingResult {
  if (request.response_format !== undefined) {
    return { ok: false, message: `structured output (${request.response_format.type}) is not supported by Anthropic models` };
  }
  if (thinking) return { ok: true, fields: {} };
  const fields: { temperature?: number; top_p?: number } = {};
  if (request.temperature !== undefined) fields.temperature = Math.min(request.temperature, 1);
  if (request.top_p !== undefined) fields.top_p = request.top_p;
  return { ok: true, fields };
}
