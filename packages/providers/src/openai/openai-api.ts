import type { ChatCompletion, ChatCompletionChunk } from '@tollgate/core';
import * as v from 'valibot';

/**
 * Token counts of an OpenAI-compatible reply or usage chunk: an object whose counts, when present,
 * are numbers. Whether they are sane (whole, non-negative, not absurd) is decided where money is
 * computed (the gateway's `readUsage`), which charges the estimate otherwise.
 */
export const openaiUsageSchema = v.looseObject({
  prompt_tokens: v.optional(v.number()),
  completion_tokens: v.optional(v.number()),
  total_tokens: v.optional(v.number()),
  prompt_tokens_details: v.nullish(v.looseObject({ cached_tokens: v.nullish(v.number()) })),
  completion_tokens_details: v.nullish(v.looseObject({ reasoning_tokens: v.nullish(v.number()) })),
});

const toolCallSchema = v.looseObject({
  id: v.optional(v.string()),
  type: v.optional(v.string()),
  function: v.looseObject({ name: v.string(), arguments: v.string() }),
});

/**
 * A whole `/chat/completions` reply, the fields Tollgate reads: `choices` (each an object, its
 * `message` text and tool calls typed when present) and `usage`. A choice without a message is
 * tolerated, as OpenAI-compatible servers send them; other fields pass through unchecked.
 */
export const openaiChatCompletionSchema = v.looseObject({
  choices: v.array(
    v.looseObject({
      message: v.optional(
        v.looseObject({
          content: v.nullish(v.string()),
          tool_calls: v.nullish(v.array(toolCallSchema)),
        }),
      ),
      finish_reason: v.nullish(v.string()),
    }),
  ),
  usage: v.nullish(openaiUsageSchema),
});

/** An `/images/generations` reply: `data`, each item's image as base64 (its type is sniffed after). */
export const openaiImagesSchema = v.looseObject({
  data: v.array(v.looseObject({ b64_json: v.string() })),
});

/**
 * Whether an upstream's JSON is a chat completion as far as Tollgate reads one, checked by
 * {@link openaiChatCompletionSchema}; the reply itself is relayed with its other fields.
 */
export function isOpenAIChatCompletion(value: unknown): value is ChatCompletion {
  return v.is(openaiChatCompletionSchema, value);
}

/**
 * Whether a parsed stream event is a chunk as far as Tollgate reads one: `choices`, when present,
 * an array, and `usage`, when present, checked by {@link openaiUsageSchema}. Cheap on purpose: it
 * runs on every event, and the usage check on the one event that carries usage.
 */
export function isOpenAIChatChunk(value: object): value is ChatCompletionChunk {
  const choices = 'choices' in value ? value.choices : undefined;
  const usage = 'usage' in value ? value.usage : undefined;
  if (choices !== undefined && !Array.isArray(choices)) return false;
  return usage === undefined || usage === null || v.is(openaiUsageSchema, usage);
}
