/**
 * The OpenAI Responses API wire shapes (`POST /v1/responses`) the gateway answers with: the
 * response object, its output items and usage, and the streamed events. Only what the gateway
 * sends is typed: built-in tool items, reasoning items and annotations are never produced.
 */

/** A text part of an assistant message item. */
export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  /** Always empty: the gateway produces no citations. */
  annotations: unknown[];
  /** Always empty: no log probabilities are asked for. */
  logprobs: unknown[];
}

/** Status of an output item. */
export type ResponseItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** An assistant message in `output`. */
export interface ResponseMessageItem {
  type: 'message';
  id: string;
  status: ResponseItemStatus;
  role: 'assistant';
  content: ResponseOutputText[];
}

/** A function tool call in `output`; `call_id` is what a `function_call_output` answers. */
export interface ResponseFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ResponseItemStatus;
}

/** An item of a response's `output`. */
export type ResponseOutputItem = ResponseMessageItem | ResponseFunctionCallItem;

/** Token usage of a response, as the Responses API reports it. */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** What the request was charged, in micro-dollars (set by the gateway, as on chat's usage). */
  cost_micros?: number;
}

/** `text.format` of a request and of the response that echoes it. */
export type ResponseTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; description?: string; strict?: boolean };

/** A function tool in the Responses form (flat: no `function` wrapper). */
export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

/** `tool_choice` in the Responses form. */
export type ResponseToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

/** Status of a response. */
export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The response object (`object: "response"`), whole or as carried by stream events. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  /** Set when `status` is `failed`. */
  error: { code: string; message: string } | null;
  /** Set when `status` is `incomplete`: the output limit or the provider's filter stopped it. */
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponseOutputItem[];
  parallel_tool_calls: boolean;
  /** Always null: the gateway keeps no conversation state. */
  previous_response_id: null;
  reasoning: { effort: string | null; summary: null };
  /** Always false: nothing is stored. */
  store: false;
  temperature: number | null;
  text: { format: ResponseTextFormat };
  tool_choice: ResponseToolChoice;
  tools: ResponseFunctionTool[];
  top_p: number | null;
  truncation: 'disabled';
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

/**
 * What a response object echoes from its request: everything but the id, time, status, output
 * and usage.
 */
export type ResponseEcho = Pick<
  ResponseObject,
  | 'instructions'
  | 'max_output_tokens'
  | 'model'
  | 'parallel_tool_calls'
  | 'reasoning'
  | 'temperature'
  | 'text'
  | 'tool_choice'
  | 'tools'
  | 'top_p'
  | 'user'
  | 'metadata'
>;

/** A content part event's `part`. */
export type ResponseContentPart = ResponseOutputText;

/** A streamed Responses event; every event carries its `sequence_number`, from 0. */
export type ResponseStreamEvent =
  | {
      type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed';
      sequence_number: number;
      response: ResponseObject;
    }
  | { type: 'response.output_item.added' | 'response.output_item.done'; sequence_number: number; output_index: number; item: ResponseOutputItem }
  | {
      type: 'response.content_part.added' | 'response.content_part.done';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      part: ResponseContentPart;
    }
  | {
      type: 'response.output_text.delta';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      delta: string;
      logprobs: unknown[];
    }
  | {
      type: 'response.output_text.done';
      sequence_number: number;
      item_id: string;
      output_index: number;
      content_index: number;
      text: string;
      logprobs: unknown[];
    }
  | { type: 'response.function_call_arguments.delta'; sequence_number: number; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; sequence_number: number; item_id: string; output_index: number; name: string; arguments: string }
  | { type: 'error'; sequence_number: number; code: string; message: string; param: null };
