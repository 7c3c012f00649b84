import type { Refusal, Result } from '@tollgate/core';
import { decodeBase64 } from './decode-base64';
import { sniffImageType } from './sniff-image-type';

/** Image types taken as reference images. */
export type ReferenceImageType = 'image/png' | 'image/jpeg' | 'image/webp';

/** The result of {@link parseImageDataUrl}. */
export type ParseImageDataUrlResult = Result<{ mime: ReferenceImageType; bytes: Uint8Array }>;

/** The one refusal of {@link parseImageDataUrl}; the caller names the field in its own message. */
const NOT_AN_IMAGE: { ok: false; error: Refusal } = {
  ok: false,
  error: { code: 'invalid_parameter', message: 'Not a base64 data URL of a PNG, JPEG or WebP image.' },
};

const DECLARED: Record<string, ReferenceImageType> = {
  'image/png': 'image/png',
  'image/jpeg': 'image/jpeg',
  // A common misspelling clients send; the bytes are still sniffed, so it costs nothing to accept.
  'image/jpg': 'image/jpeg',
  'image/webp': 'image/webp',
};

/**
 * Parses a base64 `data:` URL of a PNG, JPEG or WebP image. Refused: other schemes, non-base64
 * data, other types (GIF included), and a declared type that the bytes contradict.
 * @example
 * const parsed = parseImageDataUrl('data:image/png;base64,iVBORw0KGgo...');
 * if (!parsed.ok) return invalidParameter('reference_images');
 * parsed.value.mime; // 'image/png', parsed.value.bytes: the decoded image
 */
export function parseImageDataUrl(url: string): ParseImageDataUrlResult {
  // Only the header is examined as a string; the payload is decoded in place from its offset.
  if (typeof url !== 'string' || url.slice(0, 5).toLowerCase() !== 'data:') return NOT_AN_IMAGE;
  const comma = url.indexOf(',', 5);
  if (comma < 0 || comma > 256) return NOT_AN_IMAGE;
  // data:[<mediatype>][;param=value]*;base64 — parameters (e.g. name=) are allowed and ignored.
  const params = url
    .slice(5, comma)
    .split(';')
    .map((part) => part.trim().toLowerCase());
  if (params.length < 2 || params[params.length - 1] !== 'base64') return NOT_AN_IMAGE;
  const declared = DECLARED[params[0] ?? ''];
  if (declared === undefined) return NOT_AN_IMAGE;
  const bytes = decodeBase64(url, comma + 1);
  if (bytes === undefined || sniffImageType(bytes) !== declared) return NOT_AN_IMAGE;
  return { ok: true, value: { mime: declared, bytes } };
}
