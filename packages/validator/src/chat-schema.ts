import * as v from 'valibot';
import { isJsonObject, jsonObject, oneOf, refusedString } from './schema-helpers';

/** The roles a message may have. */
export const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;
/** The reasoning efforts the gateway takes. */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
/** The most messages a request may hold. */
export const MAX_MESSAGES = 4_096;

const KNOWN_PARTS = new Set(['text', 'image_url', 'file']);

const textPart = v.object({ type: v.literal('text'), text: v.string() });
const imagePart = v.object({
  type: v.literal('image_url'),
  image_url: v.object({ url: v.string(), detail: v.nullish(oneOf(['auto', 'low', 'high'])) }),
});
// A file object stays loose here: extra members are a shape the model does not take
// (`invalid_request`), decided in the second phase, not a wrong type.
const filePart = v.object({
  type: v.literal('file'),
  file: v.looseObject({ file_data: v.nullish(v.string()), filename: v.nullish(v.string()) }),
});
// Other part types (video_url, audio_url, file_url, input_audio, ...) are kept as sent; whether the
// model reads them is decided in the second phase.
const otherPart = v.looseObject({ type: v.string() });

const contentPart = v.lazy((input: unknown) => {
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === 'text') return textPart;
  if (type === 'image_url') return imagePart;
  if (type === 'file') return filePart;
  return typeof type === 'string' && !KNOWN_PARTS.has(type) ? otherPart : v.object({ type: v.string() });
});

// Optional (absent means null): valibot treats a bare `lazy` member as required.
const content = v.nullish(
  v.lazy((input: unknown) => {
    if (typeof input === 'string') return v.string();
    if (Array.isArray(input)) return v.array(contentPart);
    return v.union([v.string(), v.array(v.unknown()), v.null_()]);
  }),
);

const plainMessage = v.object({ role: v.picklist(['system', 'developer', 'user']), content });
const assistantMessage = v.object({
  role: v.literal('assistant'),
  content,
  // The tool-call object's shape is unspecified: each one is checked in the second phase.
  tool_calls: v.nullish(v.array(v.looseObject({}))),
});
const toolMessage = v.object({ role: v.literal('tool'), content, tool_call_id: v.nullish(v.string()) });

const message = v.lazy((input: unknown) => {
  const role = isJsonObject(input) ? input.role : undefined;
  if (role === 'assistant') return assistantMessage;
  if (role === 'tool') return toolMessage;
  if (role === 'system' || role === 'developer' || role === 'user') return plainMessage;
  return v.object({ role: typeof role === 'string' ? refusedString(CHAT_ROLES) : v.string() });
});

const functionTool = v.object({
  type: v.literal('function'),
  function: v.object({ name: v.string(), description: v.nullish(v.string()), parameters: v.nullish(jsonObject) }),
});
const tool = v.lazy((input: unknown) => {
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === 'function') return functionTool;
  // Another tool type (web_search, custom, ...) is a shape models here do not take: second phase.
  return typeof type === 'string' ? v.looseObject({ type: v.string() }) : v.object({ type: v.string() });
});

const toolChoice = v.lazy((input: unknown) => {
  if (typeof input === 'string') return oneOf(['auto', 'none', 'required']);
  if (isJsonObject(input) && typeof input.type === 'string') {
    return v.object({ type: oneOf(['function']), function: v.object({ name: v.string() }) });
  }
  return v.union([v.string(), v.object({ type: v.string() })]);
});

const outputLimit = v.nullish(v.pipe(v.number(), v.integer('must be a positive integer or null'), v.minValue(1, 'must be a positive integer or null')));

/**
 * The chat completion request of the spec: every field of its tables, messages per role, content
 * parts, tools and tool_choice. Unlisted fields are dropped (`v.object` strips them); `null` on an
 * optional field means unset.
 */
export const chatRequestSchema = v.object({
  model: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  messages: v.pipe(v.array(message), v.minLength(1, 'must hold at least one message'), v.maxLength(MAX_MESSAGES, `holds more than ${MAX_MESSAGES} entries`)),
  stream: v.nullish(v.boolean()),
  stream_options: v.nullish(v.object({ include_usage: v.nullish(v.boolean()) })),
  max_completion_tokens: outputLimit,
  max_tokens: outputLimit,
  reasoning_effort: v.nullish(oneOf(REASONING_EFFORTS)),
  tools: v.nullish(v.array(tool)),
  tool_choice: v.nullish(toolChoice),
  parallel_tool_calls: v.nullish(v.boolean()),
});

/** What {@link chatRequestSchema} returns. */
export type ChatRequestInput = v.InferOutput<typeof chatRequestSchema>;
