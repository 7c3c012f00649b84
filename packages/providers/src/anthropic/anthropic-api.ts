/**
 * Wire shapes of the Anthropic Messages API (`POST /v1/messages`), only the fields Tollgate
 * sends or reads. Reference: https://docs.anthropic.com/en/api/messages
 */
import * as v from 'valibot';

/** A base64 or plain-text source of an image or document block. */
export type AnthropicSource = { type: 'base64'; media_type: string; data: string } | { type: 'text'; media_type: 'text/plain'; data: string };

/** A content block of a request message. */
export type AnthropicRequestBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: AnthropicSource }
  | { type: 'document'; source: AnthropicSource; title?: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string | AnthropicRequestBlock[]; is_error?: boolean };

/** A request message: the API demands user and assistant turns alternate. */
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicRequestBlock[];
}

/** A client tool. */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

/** How the model may use tools. */
export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** The body of `POST /messages`. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: { type: 'text'; text: string }[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: 'enabled'; budget_tokens: number };
  stream?: boolean;
  temperature?: number;
  top_p?: number;
}

/** A content block of a reply. */
export type AnthropicResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string };

/** Why the model stopped. */
export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/** Token counts: `input_tokens` excludes the cached parts, which are reported beside it. */
export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** The reply of `POST /messages`. */
export interface AnthropicResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** The error body: `{type: 'error', error: {type, message}}`. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** The events of a streamed reply, one per SSE event (the SSE `event:` field repeats `type`). */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicResponse }
  | { type: 'content_block_start'; index: number; content_block: AnthropicResponseBlock }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'input_json_delta'; partial_json: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string }
        | { type: 'citations_delta'; citation: unknown };
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null }; usage: AnthropicUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

/** Token counts of a reply: numbers when present (cache counts may be null). */
export const anthropicUsageSchema = v.looseObject({
  input_tokens: v.optional(v.number()),
  output_tokens: v.optional(v.number()),
  cache_read_input_tokens: v.nullish(v.number()),
  cache_creation_input_tokens: v.nullish(v.number()),
});

const KNOWN_BLOCKS = ['text', 'tool_use', 'thinking', 'redacted_thinking'];

/** A reply's content blocks: the known ones checked, others (server tools' blocks) dropped. */
const anthropicReplyBlocksSchema = v.pipe(
  v.array(
    v.union([
      v.looseObject({ type: v.literal('text'), text: v.string() }),
      v.looseObject({ type: v.literal('tool_use'), id: v.string(), name: v.string(), input: v.unknown() }),
      v.looseObject({ type: v.literal('thinking'), thinking: v.string(), signature: v.optional(v.string()) }),
      v.looseObject({ type: v.literal('redacted_thinking'), data: v.string() }),
      v.pipe(
        v.looseObject({ type: v.pipe(v.string(), v.notValues(KNOWN_BLOCKS)) }),
        v.transform(() => null),
      ),
    ]),
  ),
  v.transform((blocks) => blocks.filter((block) => block !== null)),
);

/**
 * A whole `POST /messages` reply as far as Tollgate reads it: a `message` with an id, a model, its
 * content blocks, the stop reason and usage.
 */
export const anthropicReplySchema = v.looseObject({
  id: v.string(),
  type: v.literal('message'),
  model: v.string(),
  content: anthropicReplyBlocksSchema,
  stop_reason: v.nullish(v.string()),
  usage: v.optional(anthropicUsageSchema),
});

/** A whole reply, checked by {@link anthropicReplySchema}. */
export type AnthropicReply = v.InferOutput<typeof anthropicReplySchema>;
