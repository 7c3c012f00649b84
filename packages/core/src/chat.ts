/**
 * The chat-completions wire shapes shared by the validator (its output), the providers (their
 * input and output) and the gateway. Requests are the normalised form: only the fields that reach
 * a model, per role only the kept fields.
 */

/** A text content part. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** An inline image part: `url` is always a `data:` URL. */
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** A file part: inline data only. */
export interface FilePart {
  type: 'file';
  file: { file_data?: string; filename?: string };
}

/** Another part type a model may read (`video_url`, `audio_url`, `file_url`, ...), kept as sent. */
export interface OtherPart {
  type: string;
  [field: string]: unknown;
}

/** A content part of a message. */
export type ContentPart = TextPart | ImagePart | FilePart | OtherPart;

/** A tool call as the model returned it. */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A normalised message: per role only the kept fields. */
export type ChatMessage =
  | { role: 'system' | 'developer' | 'user'; content: string | ContentPart[] | null }
  | { role: 'assistant'; content: string | ContentPart[] | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; content: string | ContentPart[] | null; tool_call_id?: string };

/** A function tool. */
export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

/** tool_choice as the spec allows it. */
export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

/** Reasoning effort values the gateway takes. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/**
 * A normalised chat request as it leaves the validator. `max_completion_tokens` is absent when
 * the client set no limit; the gateway resolves it against the model before the providers see it.
 */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  stream_options?: { include_usage: boolean };
  max_completion_tokens?: number;
  reasoning_effort?: ReasoningEffort;
  tools?: ChatTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  /** Sampling temperature, 0 to 2. Set only by `/v1/responses`: the chat endpoint drops it, as the spec says. */
  temperature?: number;
  /** Nucleus sampling, 0 to 1. Set only by `/v1/responses`, as `temperature`. */
  top_p?: number;
  /** Structured output (the chat form of the Responses `text.format`). Set only by `/v1/responses`. */
  response_format?: ResponseFormat;
}

/** Structured output in the chat-completions form. */
export type ResponseFormat =
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema: Record<string, unknown>; description?: string; strict?: boolean } };

/** Token usage as the spec reports it. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
  /** What the request was charged, in micro-dollars: the ledger entry's amount (set by the gateway). */
  cost_micros?: number;
}

/** Why a choice ended. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** A non-streamed chat completion. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: 'assistant'; content: string | null; refusal: string | null; tool_calls?: ToolCall[] };
    finish_reason: FinishReason | null;
  }[];
  usage?: Usage;
}

/** A tool-call delta of a streamed chunk. */
export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/** A streamed chat completion chunk. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role?: 'assistant'; content?: string | null; refusal?: string | null; tool_calls?: ToolCallDelta[] };
    finish_reason: FinishReason | null;
  }[];
  usage?: Usage | null;
  obfuscation?: string;
}
