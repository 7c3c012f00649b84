import { imagePixelSize, sniffBase64ImageType, type ImageResolution } from '@tollgate/validator';
import type { GeneratedImage, ProviderImageRequest } from '../provider';
import { ProviderError } from '../provider';
import { checkReply } from '../http/check-reply';
import { openaiImagesSchema } from './openai-api';

// OpenAI's own image models take only these sizes (any other is a 400), so for them the ratio
// decides the orientation alone; OpenAI-compatible servers get the exact pixel size.
const FIXED_SIZES: { model: RegExp; square: string; landscape: string; portrait: string }[] = [
  { model: /^gpt-image-/, square: '1024x1024', landscape: '1536x1024', portrait: '1024x1536' },
  { model: /^dall-e-3/, square: '1024x1024', landscape: '1792x1024', portrait: '1024x1792' },
];

/**
 * The `size` for an aspect ratio and resolution: the canonical pixel size of {@link imagePixelSize}
 * (`16:9` at `1k` -> `1024x576`), except for OpenAI's own models (`gpt-image-*`, `dall-e-3`),
 * which take fixed sizes: there the ratio picks square, landscape or portrait.
 * @example
 * openaiImageSize('3:2', '2k') // '2048x1368'
 * openaiImageSize('16:9', '1k', 'gpt-image-1') // '1536x1024'
 */
export function openaiImageSize(aspectRatio: string, resolution: string, upstream = ''): string {
  const { width, height } = imagePixelSize(aspectRatio, resolution as ImageResolution);
  const fixed = FIXED_SIZES.find((entry) => entry.model.test(upstream));
  if (fixed) return width === height ? fixed.square : width > height ? fixed.landscape : fixed.portrait;
  return `${width}x${height}`;
}

/**
 * The upstream body of an image request. Reference images are not sent: the generations endpoint
 * takes none. `response_format: 'b64_json'` for every model but OpenAI's `gpt-image-*`, which
 * always answer base64 and refuse the field (400 `unknown_parameter`).
 */
export function convertToOpenAIImageRequest(request: ProviderImageRequest, upstream: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: upstream,
    prompt: request.prompt,
    n: request.n,
    size: openaiImageSize(request.aspect_ratio, request.resolution, upstream),
  };
  if (!/^gpt-image-/.test(upstream)) body.response_format = 'b64_json';
  if (request.quality !== undefined) body.quality = request.quality;
  return body;
}

/**
 * The images of an OpenAI images reply, each with its media type sniffed from its bytes; an image
 * whose bytes are no known image type is left out (not delivered, not paid for: the client is never
 * handed bytes labelled with a type nobody checked). A reply with no image left is an `upstream_error`.
 */
export function readOpenAIImages(body: unknown): GeneratedImage[] {
  const { data } = checkReply(openaiImagesSchema, body, 200);
  const images = data.flatMap((item) => {
    const mime = sniffBase64ImageType(item.b64_json);
    return mime === undefined ? [] : [{ b64_json: item.b64_json, mime_type: mime }];
  });
  if (images.length === 0) throw new ProviderError('upstream_error', { accepted: true, status: 200 });
  return images;
}
