import type { ChatCompletion, ResponseObject, ResponseOutputItem, Usage } from '@tollgate/core';
import { finishStatus, randomItemId, type ResponseMeta, responseObject } from './response-meta';
import { toResponseUsage } from './to-response-usage';

/**
 * A whole chat completion as a Responses response object: the assistant's text as one `message`
 * item with one `output_text` part, each tool call as a `function_call` item (its chat id is the
 * `call_id`), `length` and `content_filter` finishes as an `incomplete` response. `usage` is the
 * usage the request is billed for (the provider's, or the gateway's estimate).
 *
 * @example
 * const body = chatCompletionToResponse(await provider.chat(request, options), usage, { id: responseId(), createdAt, echo, maxOutputTokens });
 */
export function chatCompletionToResponse(completion: ChatCompletion, usage: Usage | undefined, meta: ResponseMeta): ResponseObject {
  const itemId = meta.itemId ?? randomItemId;
  const choice = completion.choices[0];
  const ending = finishStatus(choice?.finish_reason);
  const itemStatus = ending.status === 'completed' ? 'completed' : 'incomplete';
  const message = choice?.message;
  const text = typeof message?.content === 'string' ? message.content : (message?.refusal ?? '');
  const calls = message?.tool_calls ?? [];
  const output: ResponseOutputItem[] = [];
  if (text !== '' || calls.length === 0) {
    output.push({
      type: 'message',
      id: itemId('msg'),
      status: itemStatus,
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
    });
  }
  for (const call of calls) {
    output.push({
      type: 'function_call',
      id: itemId('fc'),
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      status: 'completed',
    });
  }
  return responseObject(meta, ending, output, usage === undefined ? null : toResponseUsage(usage));
}
