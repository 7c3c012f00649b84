/**
 * `Retry-After` in whole seconds (at least 1), from delta-seconds or an HTTP date; undefined when
 * absent or unreadable.
 */
export function readRetryAfter(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : (Date.parse(value) - now()) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.max(1, Math.ceil(seconds));
}
