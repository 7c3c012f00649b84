import type { FinishReason } from '@tollgate/core';

/** Finish reasons that mean a safety or policy system stopped the answer. */
const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * Maps a Gemini `finishReason` to an OpenAI `finish_reason`. Gemini ends a turn with function calls
 * as `STOP`, so `hasToolCalls` turns that into `tool_calls`.
 */
export function mapGeminiFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && FILTERED.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}
