import type { ChatCompletionChunk } from '@tollgate/core';

/** A JSON string without escapes, its characters captured (they are its value as they stand). */
const PLAIN = '"([^"\\\\\\x00-\\x1f]*)"';
/** Any JSON string, its text between the quotes captured (escapes still in it). */
const STRING = '"((?:[^"\\\\\\x00-\\x1f]|\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{4}))*)"';

/**
 * The text of the chunk OpenAI streams most, exactly as it sends it: one choice whose delta is
 * content (the first with `role`, and `refusal: null` where OpenAI adds it), no finish reason,
 * members in OpenAI's order, no whitespace. Everything it allows is valid JSON: a text it matches
 * parses to the object {@link matchChatChunk} builds from the captures.
 * Captures: 1 id, 2 created, 3 model, 4 service_tier, 5 system_fingerprint (6: it is null),
 * 7 role, 8 content, 9 refusal, 10 usage, 11 obfuscation.
 */
const CONTENT_CHUNK = new RegExp(
  `^\\{"id":${PLAIN},"object":"chat\\.completion\\.chunk","created":(0|[1-9][0-9]{0,14}),"model":${PLAIN},` +
    `(?:"service_tier":${PLAIN},)?(?:"system_fingerprint":(?:${PLAIN}|(null)),)?` +
    `"choices":\\[\\{"index":0,"delta":\\{(?:"role":"(assistant)",)?"content":${STRING}(,"refusal":null)?\\},"logprobs":null,"finish_reason":null\\}\\]` +
    `(,"usage":null)?(?:,"obfuscation":${PLAIN})?\\}$`,
);

/**
 * The chunk `text` holds when it is a content chunk as OpenAI sends it (see `CONTENT_CHUNK`), read
 * without `JSON.parse`: equal to `JSON.parse(text)`, members in the same order; undefined for any
 * other text (the caller parses it). Most chunks of a stream are this one shape, and one match of
 * its pattern costs a fifth of a parse (docs/benchmarks.md, "Issue #17, seventh pass").
 */
export function matchChatChunk(text: string): ChatCompletionChunk | undefined {
  const match = CONTENT_CHUNK.exec(text);
  if (match === null) return undefined;
  const [, id, created, model, serviceTier, fingerprint, nullFingerprint, role, content, refusal, usage, obfuscation] = match as unknown as (
    | string
    | undefined
  )[];
  // Built member by member in the text's order, as JSON.parse builds it.
  const chunk: Record<string, unknown> = { id, object: 'chat.completion.chunk', created: Number(created), model };
  if (serviceTier !== undefined) chunk.service_tier = serviceTier;
  if (fingerprint !== undefined) chunk.system_fingerprint = fingerprint;
  else if (nullFingerprint !== undefined) chunk.system_fingerprint = null;
  const raw = content as string;
  const delta: Record<string, unknown> = {};
  if (role !== undefined) delta.role = role;
  // Escapes are rare in a content piece: decoded by JSON.parse only where there is one.
  delta.content = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
  if (refusal !== undefined) delta.refusal = null;
  chunk.choices = [{ index: 0, delta, logprobs: null, finish_reason: null }];
  if (usage !== undefined) chunk.usage = null;
  if (obfuscation !== undefined) chunk.obfuscation = obfuscation;
  return chunk as unknown as ChatCompletionChunk;
}
