import { ProviderError } from '../provider';

// Failures where no connection was made, so the upstream cannot have seen the request.
const CONNECT_FAILURES = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT|ConnectionRefused|connection refused|dns error/i;

/**
 * Maps a rejected `fetch` (no response at all): a connection that could not be made is
 * `upstream_unavailable` and not accepted (failover may try the next route); anything else
 * (reset, timeout) may have reached the upstream and is `upstream_error`.
 * @example
 * mapFetchFailure(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })).code; // 'upstream_unavailable'
 */
export function mapFetchFailure(error: unknown): ProviderError {
  if (CONNECT_FAILURES.test(describe(error))) return new ProviderError('upstream_unavailable', { accepted: false });
  return new ProviderError('upstream_error', { accepted: true });
}

/** The codes and messages of an error and its causes (undici nests the socket error a level or two down). */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    const record = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof record.code === 'string') parts.push(record.code);
    if (typeof record.message === 'string') parts.push(record.message);
    current = record.cause;
  }
  return parts.join(' ');
}
