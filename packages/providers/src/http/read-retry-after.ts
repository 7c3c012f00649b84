/**
 * Seconds to wait (whole, at least 1) from `retry-after-ms` (OpenAI) or `Retry-After`
 * (delta-seconds or an HTTP date); undefined when absent or unreadable. Shared by every adapter.
 * @example
 * readRetryAfter(new Headers({ 'retry-after': '2.5' })); // 3
 */
export function readRetryAfter(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.max(1, Math.ceil(Number(ms) / 1000));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : (Date.parse(value) - now()) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.max(1, Math.ceil(seconds));
}
