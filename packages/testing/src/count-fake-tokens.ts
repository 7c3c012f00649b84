import { countWords } from './openai/openai-reply';

/** Structural fields whose values are not text the model reads. */
const STRUCTURAL = new Set(['role', 'type', 'id', 'tool_use_id', 'media_type', 'mimeType', 'signature', 'thoughtSignature']);

/** Tokens a fake charges for one image or document, whatever its size. */
export const FAKE_MEDIA_TOKENS = 100;

/**
 * Tokens of a JSON value with the fakes' tokenizer (one token per word): the words of every
 * string in it but structural fields (role, type, ids, media types), and {@link FAKE_MEDIA_TOKENS} for each object `isMedia` recognises (its base64
 * payload is not words). Shared by the Anthropic and Gemini fakes.
 * @example
 * countFakeJsonTokens({ text: 'two words' }, () => false); // 2
 */
export function countFakeJsonTokens(value: unknown, isMedia: (node: Record<string, unknown>) => boolean): number {
  if (typeof value === 'string') return countWords(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countFakeJsonTokens(item, isMedia), 0);
  if (typeof value !== 'object' || value === null) return 0;
  const node = value as Record<string, unknown>;
  if (isMedia(node)) return FAKE_MEDIA_TOKENS;
  let sum = 0;
  for (const [key, item] of Object.entries(node)) if (!STRUCTURAL.has(key)) sum += countFakeJsonTokens(item, isMedia);
  return sum;
}
