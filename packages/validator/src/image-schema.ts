import * as v from 'valibot';
import { ASPECT_RATIOS } from './nearest-aspect-ratio';
import { integerBetween, oneOf } from './schema-helpers';

/** Every resolution value; each model takes a subset (`model.resolutions`, default `["1k"]`). */
export const RESOLUTIONS = ['1k', '2k'] as const;

/**
 * The image generation request (docs/http-api.md). Unlisted fields are refused (`v.strictObject`);
 * `null` on an optional field means unset.
 */
export const imageRequestSchema = v.strictObject({
  model: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  prompt: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  n: v.nullish(integerBetween(1, 4)),
  aspect_ratio: v.nullish(oneOf(ASPECT_RATIOS)),
  resolution: v.nullish(oneOf(RESOLUTIONS)),
  quality: v.nullish(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  reference_images: v.nullish(v.array(v.string())),
  response_format: v.nullish(oneOf(['b64_json'])),
});
