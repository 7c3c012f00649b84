import type { ContentPart } from '@tollgate/core';
import { parseDataUrl } from '../http/parse-data-url';
import type { GeminiPart } from './gemini-api';

/** The result of converting one message's content. */
export type ConvertPartsResult = { ok: true; parts: GeminiPart[] } | { ok: false; message: string };

/**
 * Converts OpenAI message content into Gemini parts: text as text, inline images and files as
 * `inlineData` (Gemini reads images, PDFs, audio, video and text files this way). Empty text is
 * dropped: the API refuses a part with no data.
 */
export function convertToGeminiParts(content: string | ContentPart[] | null, allowMedia = true): ConvertPartsResult {
  if (content === null) return { ok: true, parts: [] };
  if (typeof content === 'string') return { ok: true, parts: content === '' ? [] : [{ text: content }] };
  const parts: GeminiPart[] = [];
  for (const part of content) {
    if (part.type === 'text' || part.type === 'refusal') {
      const text = String(part.type === 'text' ? part.text : ((part as { refusal?: unknown }).refusal ?? ''));
      if (text !== '') parts.push({ text });
      continue;
    }
    if (!allowMedia) return { ok: false, message: `a ${part.type} part cannot appear in system text` };
    const url = mediaUrl(part);
    const data = url === undefined ? undefined : parseDataUrl(url);
    if (data === undefined) return { ok: false, message: `the model does not take this ${part.type} part` };
    parts.push({ inlineData: { mimeType: data.mediaType, data: data.base64 } });
  }
  return { ok: true, parts };
}

/** The data URL of a media part: `image_url.url`, `file.file_data`, or `<type>.url` of other kinds. */
function mediaUrl(part: ContentPart): string | undefined {
  const record = part as Record<string, unknown>;
  if (part.type === 'file') {
    const data = (record.file as { file_data?: unknown } | undefined)?.file_data;
    return typeof data === 'string' ? data : undefined;
  }
  const url = (record[part.type] as { url?: unknown } | undefined)?.url;
  return typeof url === 'string' ? url : undefined;
}
