/** The aspect ratios of the spec's image generation request, in the spec's order. */
export const ASPECT_RATIOS = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3'] as const;

/** One of {@link ASPECT_RATIOS}. */
export type AspectRatio = (typeof ASPECT_RATIOS)[number];

const LOG_RATIOS = ASPECT_RATIOS.map((ratio) => {
  const [width, height] = ratio.split(':').map(Number) as [number, number];
  return Math.log(width / height);
});

/**
 * The listed ratio nearest to width:height, measured as |log(w/h) - log(rw/rh)| so that 2:1 and
 * 1:2 are equally far from 1:1. Ties go to the earlier ratio of {@link ASPECT_RATIOS}; a
 * non-positive or non-finite size gives `1:1`, the spec's default.
 * @example
 * nearestAspectRatio(1920, 1080) // '16:9'
 * nearestAspectRatio(1000, 1400) // '2:3'
 */
export function nearestAspectRatio(width: number, height: number): AspectRatio {
  if (!(width > 0 && height > 0 && Number.isFinite(width) && Number.isFinite(height))) return '1:1';
  const target = Math.log(width / height);
  let best = 0;
  let bestDistance = Infinity;
  LOG_RATIOS.forEach((logRatio, index) => {
    const distance = Math.abs(target - logRatio);
    // Strictly closer only (with a little slack for float noise), so a tie keeps the earlier ratio.
    if (distance < bestDistance - 1e-12) {
      best = index;
      bestDistance = distance;
    }
  });
  return ASPECT_RATIOS[best] as AspectRatio;
}

/** Whether a string is one of {@link ASPECT_RATIOS}. */
export function isAspectRatio(value: unknown): value is AspectRatio {
  return typeof value === 'string' && (ASPECT_RATIOS as readonly string[]).includes(value);
}
