import { decodeBase64 } from './decode-base64';
import { sniffImageType } from './sniff-image-type';

/** Image types taken as reference images. */
export type ReferenceImageType = 'image/png' | 'image/jpeg' | 'image/webp';

/** The result of {@link parseImageDataUrl}. */
export type ParseImageDataUrlResult = { ok: true; mime: ReferenceImageType; bytes: Uint8Array } | { ok: false };

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
 * parsed.mime; // 'image/png', parsed.bytes: the decoded image
 */
export function parseImageDataUrl(url: string): ParseImageDataUrlResult {
  // Only the header is examined as a string; the payload is decoded in place from its offset.
  if (typeof url !== 'string' || url.slice(0, 5).toLowerCase() !== 'data:') return { ok: false };
  const comma = url.indexOf(',', 5);
  if (comma < 0 || comma > 256) return { ok: false };
  // data:[<mediatype>][;param=value]*;base64 — parameters (e.g. name=) are allowed and ignored.
  const params = url
    .slice(5, comma)
    .split(';')
    .map((part) => part.trim().toLowerCase());
  if (params.length < 2 || params[params.length - 1] !== 'base64') return { ok: false };
  const declared = DECLARED[params[0] ?? ''];
  if (declared === undefined) return { ok: false };
  const bytes = decodeBase64(url, comma + 1);
  if (bytes === undefined || sniffImageType(bytes) !== declared) return { ok: false };
  return { ok: true, mime: declared, bytes };
}
