import type { ConvertedHtml } from './convert-html';

/** How a media type is read: converted from HTML, passed through as text, or refused. */
export type ContentKind = 'html' | 'text' | 'refused';

/** The media type (lower case, no parameters) and charset of a Content-Type header. */
export function parseContentType(header: string | null): { type: string; charset: string | undefined } {
  if (header === null || header.trim() === '') return { type: '', charset: undefined };
  const [type = '', ...parameters] = header.split(';');
  const charset = parameters.map((parameter) => parameter.trim().match(/^charset\s*=\s*"?([^";\s]+)"?$/i)?.[1]).find((value) => value !== undefined);
  return { type: type.trim().toLowerCase(), charset };
}

/**
 * How a media type is read. HTML (and XHTML) is converted; every other `text/*`, JSON and XML
 * (`application/json`, `application/*+json`, `application/xml`, `application/*+xml`) passes
 * through as it is; anything else (images, PDFs, archives, binaries) is refused.
 */
export function contentKind(type: string): ContentKind {
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type.startsWith('text/')) return 'text';
  if (type === 'application/json' || type === 'application/xml') return 'text';
  if (/^application\/[a-z0-9.+-]+\+(json|xml)$/.test(type)) return 'text';
  return 'refused';
}

/** A media type for a reply without Content-Type, guessed from its first bytes; `''` when binary. */
export function sniffContentType(bytes: Uint8Array): string {
  const head = new TextDecoder()
    .decode(bytes.subarray(0, 1024))
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'text/html';
  return bytes.subarray(0, 1024).includes(0) ? '' : 'text/plain';
}

/**
 * Decodes body bytes by the declared charset (or an HTML `<meta charset>`), UTF-8 when unknown.
 * A cut body drops its incomplete last character instead of ending in a replacement character.
 */
export function decodeBody(bytes: Uint8Array, charset: string | undefined, truncated: boolean, html: boolean): string {
  let label = charset;
  if (label === undefined && html) {
    const head = new TextDecoder('latin1').decode(bytes.subarray(0, 2048));
    label = head.match(/<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_:.-]+)/i)?.[1];
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label ?? 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  return decoder.decode(bytes, { stream: truncated });
}

let converter: Promise<typeof import('./convert-html')> | undefined;

/**
 * The HTML converter, loaded on first use: turndown and its DOM (domino) weigh ~9 MB on disk and
 * ~12 MB of memory, which an embedder without a page fetcher should not pay for when importing the
 * gateway (docs/benchmarks.md, "Start-up"). A failed load is forgotten, so the next page retries it.
 */
export function loadHtmlConverter(): Promise<typeof import('./convert-html')> {
  converter ??= import('./convert-html').catch((error: unknown) => {
    converter = undefined;
    throw error;
  });
  return converter;
}

/** The page's title and content for its kind and the requested format. */
export async function pageContent(kind: 'html' | 'text', text: string, format: 'markdown' | 'text', baseUrl: string): Promise<ConvertedHtml> {
  if (kind === 'text') return { title: null, content: text };
  const { convertHtml } = await loadHtmlConverter();
  return convertHtml(text, format, baseUrl);
}
