import type { ImageDimensions } from './image-dimensions';

/** Image resolutions of the image generation request. */
export type ImageResolution = '1k' | '2k';

const LONG_SIDE: Record<ImageResolution, number> = { '1k': 1024, '2k': 2048 };

/** Sides are multiples of this: latent-diffusion models work on 8x8 blocks, and 8 keeps the ratio closest. */
const STEP = 8;

/**
 * The pixel size to ask an upstream for: the long side 1024 (`1k`) or 2048 (`2k`), the short side
 * long x ratio rounded to the nearest multiple of 8 (`3:2` at 1k -> 1024x680). Takes any `W:H` of
 * positive integers; throws a RangeError for anything else (the gateway validates the ratio first).
 * @example
 * imagePixelSize('16:9', '1k') // { width: 1024, height: 576 }
 * imagePixelSize('2:3', '2k')  // { width: 1368, height: 2048 }
 */
export function imagePixelSize(aspectRatio: string, resolution: ImageResolution): ImageDimensions {
  const match = /^([1-9]\d{0,4}):([1-9]\d{0,4})$/.exec(aspectRatio);
  const long = LONG_SIDE[resolution];
  if (match === null || long === undefined) {
    throw new RangeError(`imagePixelSize takes a W:H ratio and 1k or 2k, not ${aspectRatio} at ${String(resolution)}`);
  }
  const width = Number(match[1]);
  const height = Number(match[2]);
  const short = (side: number, other: number) => Math.max(STEP, Math.round((long * side) / other / STEP) * STEP);
  if (width >= height) return { width: long, height: short(height, width) };
  return { width: short(width, height), height: long };
}
