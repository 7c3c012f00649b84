import type { ErrorCode } from '@tollgate/core';
import { ProviderError } from '../provider';
import { readRetryAfter } from '../http/read-retry-after';

/** Statuses that prove the upstream did no work, so another route may be tried. */
const NOT_ACCEPTED = new Set([429, 503, 529]);

/**
 * Maps an Anthropic error reply (status, `{type:'error', error:{type, message}}` body, headers) to a
 * {@link ProviderError}. The body is only read to classify: it never reaches the error's message.
 * @example
 * throw mapAnthropicError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, response.headers);
 */
export function mapAnthropicError(status: number, body: unknown, headers?: Headers): ProviderError {
  const error = errorOf(body);
  const retryAfter = readRetryAfter(headers);
  const options = { status, ...(retryAfter !== undefined ? { retryAfter } : {}) };
  // Our account out of credit or past a spend limit: our billing, not the client's request (which
  // Anthropic answers as a 400 invalid_request_error), and no work done: as OpenAI's insufficient_quota.
  if (error.type === 'billing_error' || EXHAUSTED_MESSAGE.test(error.message) || EXHAUSTED_CODE.test(error.detailCode))
    return new ProviderError('upstream_error', { ...options, accepted: false });
  return new ProviderError(codeOf(status, error.type, error.message), { ...options, accepted: !NOT_ACCEPTED.has(status) });
}

/** What Anthropic says when the account cannot pay (besides a `billing_error`): a low credit balance, an organisation's or a workspace's spend limit. */
const EXHAUSTED_MESSAGE = /credit balance is too low|insufficient credits|reached your specified (workspace )?API usage limits/i;
/** The same in `error.details.error_code` (e.g. a 429 `enforced_spend_limit_reached`). */
const EXHAUSTED_CODE = /spend_limit|billing|credit/i;

/** Maps an `error` event that arrived inside a 200 stream: the upstream had accepted the request. */
export function mapAnthropicStreamError(body: unknown): ProviderError {
  const error = errorOf(body);
  return new ProviderError(codeOf(undefined, error.type, error.message), { accepted: true });
}

function codeOf(status: number | undefined, type: string, message: string): ErrorCode {
  if (/prompt is too long|exceed(s|ed)? (the )?context (limit|window)|context window/i.test(message)) return 'context_length_exceeded';
  if (/content filtering policy|content policy/i.test(message)) return 'content_filter';
  if (status === 413 || type === 'request_too_large') return 'request_too_large';
  if (status === 429 || status === 529 || type === 'rate_limit_error' || type === 'overloaded_error') return 'upstream_busy';
  if (status === 503) return 'upstream_unavailable';
  // 401/402/403/404 are our configuration (key, billing, model name): never the client's fault.
  if (status === 401 || status === 402 || status === 403 || status === 404) return 'upstream_error';
  if (type === 'authentication_error' || type === 'permission_error' || type === 'not_found_error') return 'upstream_error';
  if ((status !== undefined && status >= 400 && status < 500) || type === 'invalid_request_error') return 'invalid_request';
  return 'upstream_error';
}

function errorOf(body: unknown): { type: string; message: string; detailCode: string } {
  const error = (body as { error?: { type?: unknown; message?: unknown; details?: { error_code?: unknown } | null } } | null)?.error;
  const detailCode = error?.details?.error_code;
  return {
    type: typeof error?.type === 'string' ? error.type : '',
    message: typeof error?.message === 'string' ? error.message : '',
    detailCode: typeof detailCode === 'string' ? detailCode : '',
  };
}
