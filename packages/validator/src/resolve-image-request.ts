import type { ModelConfig } from '@tollgate/core';
import { fail, type Fail } from './fail';
import { imageDimensions } from './image-dimensions';
import { ASPECT_RATIOS } from './image-schema';
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
export type ResolveImageRequestResult = { ok: true; request: ResolvedImageRequest } | Fail;

const REFERENCE = /^data:image\/(png|jpeg|webp);base64,/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Second phase of an image request, once the gateway found the model: linked reference images
 * are `remote_media`; the model's reference count, resolutions and qualities `invalid_parameter`.
 *
 * @example
 * const resolved = resolveImageRequest(image.parsed, model);
 * if (!resolved.ok) return refuse(resolved);
 */
export function resolveImageRequest(parsed: ParsedImageRequest, model: ModelConfig): ResolveImageRequestResult {
  const references = parsed.reference_images;
  const linked = references.findIndex((reference) => !/^data:/i.test(reference));
  if (linked !== -1) return fail('remote_media', `reference_images[${linked}] links a URL; reference images must be inline data: URLs.`);
  const most = model.max_reference_images ?? 0;
  if (references.length > most) {
    return fail('invalid_parameter', most === 0
      ? `reference_images is not taken by the model ${model.id}.`
      : `reference_images holds ${references.length} images; the model ${model.id} takes at most ${most}.`);
  }
  for (const [index, reference] of references.entries()) {
    const header = REFERENCE.exec(reference);
    if (header === null || !BASE64.test(reference.slice(header[0].length))) {
      return fail('invalid_parameter', `reference_images[${index}] must be a base64 data URL of a PNG, JPEG or WebP image.`);
    }
  }
  const resolution = parsed.resolution ?? '1k';
  const resolutions = model.resolutions ?? ['1k'];
  if (!resolutions.includes(resolution)) {
    return fail('invalid_parameter', `resolution must be one of ${resolutions.join(', ')} for the model ${model.id}.`);
  }
  const request: ResolvedImageRequest = {
    prompt: parsed.prompt,
    n: parsed.n,
    aspect_ratio: parsed.aspect_ratio ?? defaultAspectRatio(references[0]),
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
  return { ok: true, request };
}

/** The listed ratio nearest the reference image's (compared on a log scale), else `1:1`. */
export function defaultAspectRatio(reference: string | undefined): string {
  if (reference === undefined) return '1:1';
  const size = imageDimensions(reference.slice(reference.indexOf(',') + 1));
  if (size === undefined) return '1:1';
  const target = Math.log(size.width / size.height);
  let best = '1:1';
  let bestDistance = Infinity;
  for (const ratio of ASPECT_RATIOS) {
    const [w, h] = ratio.split(':').map(Number) as [number, number];
    const distance = Math.abs(Math.log(w / h) - target);
    if (distance < bestDistance) {
      best = ratio;
      bestDistance = distance;
    }
  }
  return best;
}
