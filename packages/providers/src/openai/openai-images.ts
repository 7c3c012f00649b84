import type { GeneratedImage, ProviderImageRequest } from '../provider';
import { ProviderError } from '../provider';

/**
 * The OpenAI `size` for an aspect ratio and resolution. OpenAI's image models take three sizes,
 * so the ratio decides only the orientation: square 1024x1024, landscape 1536x1024, portrait
 * 1024x1536 at `1k`; `2k` doubles each side (for compatible servers that take larger sizes).
 */
export function openaiImageSize(aspectRatio: string, resolution: string): string {
  const [width, height] = aspectRatio.split(':').map(Number);
  const base = resolution === '2k' ? 2048 : 1024;
  const long = base * 1.5;
  if (!width || !height || width === height) return `${base}x${base}`;
  return width > height ? `${long}x${base}` : `${base}x${long}`;
}

/** The upstream body of an image request. Reference images are not sent: the generations endpoint takes none. */
export function convertToOpenAIImageRequest(request: ProviderImageRequest, upstream: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: upstream,
    prompt: request.prompt,
    n: request.n,
    size: openaiImageSize(request.aspect_ratio, request.resolution),
    response_format: 'b64_json',
  };
  if (request.quality !== undefined) body.quality = request.quality;
  return body;
}

/** The images of an OpenAI images reply, each with its media type sniffed from its bytes. */
export function readOpenAIImages(body: unknown): GeneratedImage[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new ProviderError('upstream_error', { accepted: true, status: 200 });
  return data.map((item: { b64_json?: unknown }) => {
    if (typeof item?.b64_json !== 'string') throw new ProviderError('upstream_error', { accepted: true, status: 200 });
    return { b64_json: item.b64_json, mime_type: sniffImageType(item.b64_json) };
  });
}

/** The media type from the first bytes of base64 image data: PNG, JPEG, WebP or GIF. */
export function sniffImageType(base64: string): string {
  let bytes: string;
  try {
    bytes = atob(base64.slice(0, 16));
  } catch {
    return 'application/octet-stream';
  }
  if (bytes.startsWith('\x89PNG\r\n\x1a\n')) return 'image/png';
  if (bytes.startsWith('\xff\xd8\xff')) return 'image/jpeg';
  if (bytes.startsWith('GIF87a') || bytes.startsWith('GIF89a')) return 'image/gif';
  if (bytes.startsWith('RIFF') && bytes.slice(8, 12) === 'WEBP') return 'image/webp';
  return 'application/octet-stream';
}
