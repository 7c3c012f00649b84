/** A `data:` URL split into its media type and base64 payload. */
export interface DataUrl {
  /** The declared media type, lower-cased, without parameters (`image/png`). */
  mediaType: string;
  /** The payload as standard base64 (re-encoded when the URL was not base64). */
  base64: string;
}

/**
 * Splits a `data:` URL; undefined when it is not one. The payload is not decoded: providers take
 * base64 as it came, so a 20 MB image is never copied byte by byte.
 */
export function parseDataUrl(url: string): DataUrl | undefined {
  if (typeof url !== 'string' || url.slice(0, 5).toLowerCase() !== 'data:') return undefined;
  const comma = url.indexOf(',', 5);
  if (comma < 0) return undefined;
  const params = url
    .slice(5, comma)
    .split(';')
    .map((part) => part.trim().toLowerCase());
  const mediaType = params[0] || 'text/plain';
  const payload = url.slice(comma + 1);
  if (params[params.length - 1] === 'base64') return { mediaType, base64: payload.replace(/\s+/g, '') };
  // A percent-encoded payload (RFC 2397 without ;base64): rare, small, re-encoded here.
  try {
    return { mediaType, base64: bytesToBase64(new TextEncoder().encode(decodeURIComponent(payload))) };
  } catch {
    return undefined;
  }
}

/** Decodes a base64 payload as UTF-8 text; undefined when it is not base64. */
export function base64ToText(base64: string): string | undefined {
  try {
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
