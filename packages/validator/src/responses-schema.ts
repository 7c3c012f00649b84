import * as v from 'valibot';
import { MAX_MESSAGES, REASONING_EFFORTS } from './chat-schema';
import { isJsonObject, jsonObject, oneOf } from './schema-helpers';

/**
 * The request of `POST /v1/responses` (OpenAI's Responses API) as the gateway takes it. Every
 * field of OpenAI's request is listed: what the gateway serves with its rules, what it does not
 * serve refused by name (`invalid_parameter`), never dropped; a field OpenAI does not have is
 * refused too. docs/http-api.md ("POST /v1/responses") gives the reasons.
 */

/** A member that must be absent (or null): its message says why the gateway does not serve it. */
const refused = (why: string) =>
  v.nullish(
    v.pipe(
      v.unknown(),
      v.check(() => false, why),
    ),
  );

/** A member whose only accepted value is `value` (or absent); anything else is refused with `why`. */
const only = <T extends boolean | string>(value: T, why: string) =>
  v.nullish(
    v.pipe(
      v.union([v.string(), v.boolean()]),
      v.check((input) => input === value, why),
    ),
  );

/**
 * A schema that always fails (a refused `type`, or a value of the wrong JSON type): it adds nothing
 * to the output type. The transform never runs: valibot stops a pipe at its first issue.
 */
const failing = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(
    schema,
    v.transform((): never => {
      throw new Error('unreachable: the schema before always fails');
    }),
  );

/** An object whose `type` is refused with `why`. */
const refusedType = (why: string) =>
  failing(
    v.object({
      type: v.pipe(
        v.string(),
        v.check(() => false, why),
      ),
    }),
  );

/** An object whose `type` is not a string: a wrong JSON type. */
const untyped = failing(v.object({ type: v.string() }));

const NO_STATE = 'is not supported: Tollgate stores no responses, so send the whole conversation in input';
const NO_FILES = 'is not supported: file inputs are not taken on /v1/responses; send text or inline images';

const inputText = v.object({ type: v.literal('input_text'), text: v.string() });
const outputText = v.object({ type: v.literal('output_text'), text: v.string() });
const refusal = v.object({ type: v.literal('refusal'), refusal: v.string() });
const inputImage = v.object({
  type: v.literal('input_image'),
  image_url: v.nullish(v.string()),
  file_id: refused(`${NO_FILES} (image by file_id)`),
  detail: v.nullish(oneOf(['auto', 'low', 'high'])),
});

const CONTENT_TYPES = ['input_text', 'input_image', 'output_text', 'refusal'] as const;

const contentPart = v.lazy((input: unknown) => {
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === 'input_text') return inputText;
  if (type === 'output_text') return outputText;
  if (type === 'refusal') return refusal;
  if (type === 'input_image') return inputImage;
  if (type === 'input_file') return refusedType(NO_FILES);
  if (typeof type === 'string') {
    return refusedType(`is not a content type taken here: one of ${CONTENT_TYPES.join(', ')}`);
  }
  return untyped;
});

// Absent content is a wrong type (OpenAI requires it), as is anything but a string or parts.
const content = v.lazy((input: unknown) => (Array.isArray(input) ? v.array(contentPart) : v.string()));

const message = v.object({
  type: v.nullish(v.literal('message')),
  role: oneOf(['user', 'system', 'developer', 'assistant']),
  content,
  // `id`, `status` and `phase` of a replayed assistant item are accepted and not needed.
  id: v.nullish(v.string()),
  status: v.nullish(v.string()),
  phase: v.nullish(v.string()),
});

const functionCall = v.object({
  type: v.literal('function_call'),
  call_id: v.string(),
  name: v.string(),
  arguments: v.string(),
  id: v.nullish(v.string()),
  status: v.nullish(v.string()),
});

const functionCallOutput = v.object({
  type: v.literal('function_call_output'),
  call_id: v.string(),
  output: content,
  id: v.nullish(v.string()),
  status: v.nullish(v.string()),
});

const ITEM_TYPES = ['message', 'function_call', 'function_call_output'] as const;

const item = v.lazy((input: unknown) => {
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === undefined || type === 'message') return message;
  if (type === 'function_call') return functionCall;
  if (type === 'function_call_output') return functionCallOutput;
  if (type === 'item_reference') return refusedType(NO_STATE);
  if (typeof type === 'string') {
    return refusedType(`is not an input item type taken here: one of ${ITEM_TYPES.join(', ')}`);
  }
  return untyped;
});

const functionTool = v.object({
  type: v.literal('function'),
  name: v.string(),
  description: v.nullish(v.string()),
  parameters: v.nullish(jsonObject),
  strict: v.nullish(v.boolean()),
});

const tool = v.lazy((input: unknown) => {
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === 'function') return functionTool;
  if (typeof type === 'string') {
    return refusedType('is not supported: only function tools are taken (no built-in tools)');
  }
  return untyped;
});

const toolChoice = v.lazy((input: unknown) => {
  if (typeof input === 'string') return oneOf(['auto', 'none', 'required']);
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === 'function') return v.object({ type: v.literal('function'), name: v.string() });
  if (typeof type === 'string') {
    return refusedType('is not supported: only auto, none, required or a function tool can be chosen');
  }
  return failing(v.union([v.string(), v.object({ type: v.string() })]));
});

const textFormat = v.lazy((input: unknown) => {
  const type = isJsonObject(input) ? input.type : undefined;
  if (type === 'text') return v.object({ type: v.literal('text') });
  if (type === 'json_object') return v.object({ type: v.literal('json_object') });
  if (type === 'json_schema') {
    return v.object({
      type: v.literal('json_schema'),
      name: v.string(),
      schema: jsonObject,
      description: v.nullish(v.string()),
      strict: v.nullish(v.boolean()),
    });
  }
  return failing(v.object({ type: typeof type === 'string' ? oneOf(['text', 'json_object', 'json_schema']) : v.string() }));
});

const metadata = v.pipe(
  v.record(
    v.pipe(v.string(), v.maxLength(64, 'keys must be at most 64 characters')),
    v.pipe(v.string(), v.maxLength(512, 'values must be at most 512 characters')),
  ),
  v.check((record) => Object.keys(record).length <= 16, 'must hold at most 16 keys'),
);

const outputLimit = v.nullish(v.pipe(v.number(), v.integer('must be a positive integer or null'), v.minValue(1, 'must be a positive integer or null')));

/** The Responses request: OpenAI's fields, strictly (an unknown field is `invalid_parameter`). */
export const responsesRequestSchema = v.strictObject({
  model: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  input: v.lazy((input: unknown) =>
    Array.isArray(input)
      ? v.pipe(v.array(item), v.minLength(1, 'must hold at least one item'), v.maxLength(MAX_MESSAGES, `holds more than ${MAX_MESSAGES} entries`))
      : v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  ),
  instructions: v.nullish(v.string()),
  stream: v.nullish(v.boolean()),
  stream_options: v.nullish(v.object({ include_obfuscation: v.nullish(v.boolean()) })),
  max_output_tokens: outputLimit,
  temperature: v.nullish(v.pipe(v.number(), v.minValue(0, 'must be from 0 to 2'), v.maxValue(2, 'must be from 0 to 2'))),
  top_p: v.nullish(v.pipe(v.number(), v.minValue(0, 'must be from 0 to 1'), v.maxValue(1, 'must be from 0 to 1'))),
  tools: v.nullish(v.array(tool)),
  tool_choice: v.nullish(toolChoice),
  parallel_tool_calls: v.nullish(v.boolean()),
  text: v.nullish(
    v.object({
      format: v.nullish(textFormat),
      verbosity: refused('is not supported: models here take no verbosity setting'),
    }),
  ),
  reasoning: v.nullish(
    v.object({
      effort: v.nullish(oneOf(REASONING_EFFORTS)),
      summary: refused('is not supported: reasoning summaries are not returned'),
      generate_summary: refused('is not supported: reasoning summaries are not returned'),
    }),
  ),
  metadata: v.nullish(metadata),
  store: only(false, 'must be false: Tollgate stores no responses'),
  user: v.nullish(v.string()),
  safety_identifier: v.nullish(v.string()),
  prompt_cache_key: v.nullish(v.string()),
  previous_response_id: refused(NO_STATE),
  conversation: refused(NO_STATE),
  prompt: refused('is not supported: stored prompt templates are not kept; send instructions and input'),
  background: only(false, 'is not supported: background responses need stored state'),
  include: v.nullish(v.pipe(v.array(v.string()), v.maxLength(0, 'is not supported: nothing extra can be included'))),
  max_tool_calls: refused('is not supported: it limits built-in tool calls, which are not served'),
  top_logprobs: refused('is not supported: log probabilities are not returned'),
  truncation: only('disabled', 'must be "disabled": a conversation too long for the model is refused, never cut'),
  service_tier: v.nullish(oneOf(['auto', 'default'])),
  prompt_cache_retention: refused('is not supported: the cache policy is the provider’s'),
});

/** What {@link responsesRequestSchema} returns. */
export type ResponsesRequestInput = v.InferOutput<typeof responsesRequestSchema>;
