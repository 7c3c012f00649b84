import type { ChatRequest, ChatModelConfig, Result } from '@tollgate/core';
import { fail, type Invalid } from './fail';
import type { ParsedChatRequest } from './parse-chat-request';
import { readablePartTypes } from './readable-part-types';

/** The result of {@link resolveChatRequest}: the request with its output limit decided. */
export type ResolveChatRequestResult = Result<ChatRequest & { max_completion_tokens: number }, Invalid>;

/** Output limit for a model that sets neither `default_output_tokens` nor `max_output_tokens`. */
export const FALLBACK_OUTPUT_TOKENS = 4_096;

/**
 * Second phase of a chat request, once the gateway found the model: `remote_media`, then
 * `invalid_request` (a shape no model takes, then a part type this model does not read); then the
 * output limit: the request's, lowered to `max_output_tokens`, else the model's default.
 *
 * @example
 * const resolved = resolveChatRequest(chat.parsed, model);
 * if (!resolved.ok) return refuse(resolved);
 */
export function resolveChatRequest(parsed: ParsedChatRequest, model: ChatModelConfig): ResolveChatRequestResult {
  if (parsed.remoteMedia !== undefined) return fail('remote_media', parsed.remoteMedia);
  if (parsed.shapeProblem !== undefined) return fail('invalid_request', parsed.shapeProblem);
  if (parsed.partUses.length > 0) {
    const readable = readablePartTypes(model);
    for (const use of parsed.partUses) {
      if (!readable.has(use.type)) {
        return fail('invalid_request', `${use.at} is a ${use.type} part, which the model ${model.id} does not read.`);
      }
    }
  }
  return { ok: true, value: { ...parsed.request, max_completion_tokens: outputLimit(parsed.requestedOutput, model) } };
}

/** The output limit: requested and lowered to the model's maximum, else the model's default. */
export function outputLimit(requested: number | undefined, model: ChatModelConfig): number {
  const max = model.max_output_tokens;
  const wanted = requested ?? model.default_output_tokens ?? max ?? FALLBACK_OUTPUT_TOKENS;
  return max !== undefined && wanted > max ? max : wanted;
}
