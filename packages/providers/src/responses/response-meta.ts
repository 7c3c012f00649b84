import {
  randomBase62,
  type FinishReason,
  type ResponseEcho,
  type ResponseObject,
  type ResponseOutputItem,
  type ResponseStatus,
  type ResponseUsage,
} from '@tollgate/core';

/** What a translated response is made from besides the model's reply. */
export interface ResponseMeta {
  /** The response id (`resp_…`), see {@link responseId}. */
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** What the response echoes from its request. */
  echo: ResponseEcho;
  /** The output limit the model was given (the request's, lowered to the model or the balance). */
  maxOutputTokens: number;
  /** New item ids (`msg_…`, `fc_…`); random by default, fixed in tests. */
  itemId?: (prefix: 'msg' | 'fc') => string;
}

/** A new response id: `resp_` and 32 base62 characters. */
export function responseId(): string {
  return `resp_${randomBase62(32)}`;
}

/** A new output item id: the prefix, `_` and 32 base62 characters. */
export function randomItemId(prefix: 'msg' | 'fc'): string {
  return `${prefix}_${randomBase62(32)}`;
}

/** How a chat finish reason ends a response: `length` and `content_filter` leave it incomplete. */
export function finishStatus(reason: FinishReason | null | undefined): Pick<ResponseObject, 'status' | 'incomplete_details'> {
  if (reason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (reason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The response object around an output, field for field in OpenAI's order. */
export function responseObject(
  meta: ResponseMeta,
  state: { status: ResponseStatus; incomplete_details?: ResponseObject['incomplete_details']; error?: ResponseObject['error'] },
  output: ResponseOutputItem[],
  usage: ResponseUsage | null,
): ResponseObject {
  const { echo } = meta;
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: echo.instructions,
    max_output_tokens: meta.maxOutputTokens,
    model: echo.model,
    output,
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: null,
    reasoning: echo.reasoning,
    store: false,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: 'disabled',
    usage,
    user: echo.user,
    metadata: echo.metadata,
  };
}
