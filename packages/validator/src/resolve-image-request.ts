import type { ImageModelConfig, Result } from '@tollgate/core';
import { fail, type Invalid } from './fail';
import { imageDimensions } from './image-dimensions';
import { nearestAspectRatio } from './nearest-aspect-ratio';
import { parseImageDataUrl } from './parse-image-data-url';
import type { ParsedImageRequest } from './parse-image-request';

/** An image request checked against its model, every default applied. */
export interface ResolvedImageRequest {
  prompt: string;
  n: number;
  /** The client's ratio, else the one nearest the first reference image's, else `1:1`. */
  aspect_ratio: string;
  resolution: string;
  /** Only when the model has a quality setting and the client chose one. */
  quality?: string;
  reference_images: string[];
}

/** The result of {@link resolveImageRequest}. */
export type ResolveImageRequestResult = Result<ResolvedImageRequest, Invalid>;

/**
 * Second phase of an image request, once the gateway found the model: linked reference images
 * are `remote_media`; the model's reference count, resolutions and qualities `invalid_parameter`,
 * and so is a reference that is not a PNG, JPEG or WebP data URL (declared type and bytes must agree).
 * Without an `aspect_ratio`, the first reference's header must give its size, since the default
 * ratio is the listed one nearest to it; an unreadable header refuses rather than silently use 1:1.
 *
 * @example
 * const resolved = resolveImageRequest(image.parsed, model);
 * if (!resolved.ok) return refuse(resolved);
 */
export function resolveImageRequest(parsed: ParsedImageRequest, model: ImageModelConfig): ResolveImageRequestResult {
  const references = parsed.reference_images;
  const linked = references.findIndex((reference) => !/^data:/i.test(reference));
  if (linked !== -1) return fail('remote_media', `reference_images[${linked}] links a URL; reference images must be inline data: URLs.`);
  const most = model.max_reference_images ?? 0;
  if (references.length > most) {
    return fail(
      'invalid_parameter',
      most === 0
        ? `reference_images is not taken by the model ${model.id}.`
        : `reference_images holds ${references.length} images; the model ${model.id} takes at most ${most}.`,
    );
  }
  let first: Uint8Array | undefined;
  for (const [index, reference] of references.entries()) {
    const image = parseImageDataUrl(reference);
    if (!image.ok) return fail('invalid_parameter', `reference_images[${index}] must be a base64 data URL of a PNG, JPEG or WebP image.`);
    first ??= image.value.bytes;
  }
  let aspectRatio: string = parsed.aspect_ratio ?? '1:1';
  if (parsed.aspect_ratio === undefined && first !== undefined) {
    const size = imageDimensions(first);
    if (size === undefined) {
      return fail('invalid_parameter', 'reference_images[0] has an image header whose size cannot be read; send aspect_ratio or a readable image.');
    }
    aspectRatio = nearestAspectRatio(size.width, size.height);
  }
  const resolution = parsed.resolution ?? '1k';
  const resolutions = model.resolutions ?? ['1k'];
  if (!resolutions.includes(resolution)) {
    return fail('invalid_parameter', `resolution must be one of ${resolutions.join(', ')} for the model ${model.id}.`);
  }
  const request: ResolvedImageRequest = {
    prompt: parsed.prompt,
    n: parsed.n,
    aspect_ratio: aspectRatio,
    resolution,
    reference_images: references,
  };
  if (parsed.quality !== undefined) {
    if (model.qualities === undefined) return fail('invalid_parameter', `quality is not a setting of the model ${model.id}.`);
    if (!model.qualities.includes(parsed.quality)) {
      return fail('invalid_parameter', `quality must be one of ${model.qualities.join(', ')} for the model ${model.id}.`);
    }
    request.quality = parsed.quality;
  }
  return { ok: true, value: request };
}
