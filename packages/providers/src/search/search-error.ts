import { ProviderError } from '../provider';

/** Seconds from a Retry-After header (delta seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/**
 * The {@link ProviderError} of a search upstream's non-2xx reply. The body is never read into the
 * error: it may echo the query or the key.
 *   429, 529 -> upstream_busy (not accepted, Retry-After carried)
 *   503 -> upstream_unavailable (not accepted, Retry-After carried)
 *   400, 422 -> invalid_request (not accepted), unless the body's `error.code` names the key
 *     (Brave answers a bad or lapsed token with 422 `SUBSCRIPTION_TOKEN_INVALID`): upstream_error
 *   401, 403 and other 4xx -> upstream_error (not accepted: the operator's key or configuration)
 *   other 5xx -> upstream_error (accepted: the upstream may have worked on it)
 */
export function searchStatusError(status: number, retryAfter: number | undefined, body?: unknown): ProviderError {
  if (status === 429 || status === 529) return new ProviderError('upstream_busy', { status, retryAfter, accepted: false });
  if (status === 503) return new ProviderError('upstream_unavailable', { status, retryAfter, accepted: false });
  if ((status === 400 || status === 422) && !namesTheKey(body)) return new ProviderError('invalid_request', { status, accepted: false });
  return new ProviderError('upstream_error', { status, accepted: status >= 500 });
}

/** Whether an error body's `error.code` is about the credential or the subscription, not the request. */
function namesTheKey(body: unknown): boolean {
  const code = (body as { error?: { code?: unknown } } | null | undefined)?.error?.code;
  return typeof code === 'string' && /TOKEN|SUBSCRIPTION|API_?KEY|AUTH|PLAN|QUOTA/i.test(code);
}
