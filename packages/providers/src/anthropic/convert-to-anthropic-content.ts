import type { ContentPart } from '@tollgate/core';
import type { AnthropicRequestBlock } from './anthropic-api';
import { base64ToText, parseDataUrl } from '../http/parse-data-url';

/** The result of converting one message's content. */
export type ConvertContentResult = { ok: true; blocks: AnthropicRequestBlock[] } | { ok: false; message: string };

/** Image types the Messages API reads. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * Converts OpenAI message content (a string or parts) into Anthropic content blocks. Empty text is
 * dropped because the API refuses empty text blocks. `allowMedia` is false for system text.
 */
export function convertToAnthropicContent(content: string | ContentPart[] | null, allowMedia = true): ConvertContentResult {
  if (content === null) return { ok: true, blocks: [] };
  if (typeof content === 'string') return { ok: true, blocks: content === '' ? [] : [{ type: 'text', text: content }] };
  const blocks: AnthropicRequestBlock[] = [];
  for (const part of content) {
    if (part.type === 'text' || part.type === 'refusal') {
      const text = String(part.type === 'text' ? part.text : ((part as { refusal?: unknown }).refusal ?? ''));
      if (text !== '') blocks.push({ type: 'text', text });
      continue;
    }
    if (!allowMedia) return { ok: false, message: `a ${part.type} part cannot appear in system text` };
    const block = part.type === 'image_url' ? imageBlock(part) : part.type === 'file' ? documentBlock(part) : undefined;
    if (block === undefined) return { ok: false, message: `the model does not take this ${part.type} part` };
    blocks.push(block);
  }
  return { ok: true, blocks };
}

function imageBlock(part: ContentPart): AnthropicRequestBlock | undefined {
  const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
  const data = typeof url === 'string' ? parseDataUrl(url) : undefined;
  if (data === undefined || !IMAGE_TYPES.has(data.mediaType)) return undefined;
  return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
}

function documentBlock(part: ContentPart): AnthropicRequestBlock | undefined {
  const file = (part as { file?: { file_data?: unknown; filename?: unknown } }).file;
  const data = typeof file?.file_data === 'string' ? parseDataUrl(file.file_data) : undefined;
  if (data === undefined) return undefined;
  const title = typeof file?.filename === 'string' && file.filename !== '' ? { title: file.filename } : {};
  if (data.mediaType === 'application/pdf') {
    return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.base64 }, ...title };
  }
  if (data.mediaType === 'text/plain') {
    // Plain-text documents travel as text sources, not base64.
    const text = base64ToText(data.base64);
    if (text === undefined) return undefined;
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, ...title };
  }
  if (IMAGE_TYPES.has(data.mediaType)) {
    return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.base64 } };
  }
  return undefined;
}
