import type { ErrorCode } from '@tollgate/core';
import { readRetryAfter } from '../http/read-retry-after';
import { ProviderError } from '../provider';
import type { GeminiErrorBody } from './gemini-api';

/** Statuses that prove the upstream did no work, so another route may be tried. */
const NOT_ACCEPTED = new Set([429, 503]);

/**
 * Maps a Gemini error reply (status, google.rpc.Status body, headers) to a {@link ProviderError}.
 * `Retry-After` comes from the header or else from the body's `RetryInfo.retryDelay`. The body is
 * only read to classify: it never reaches the error's message.
 * @example
 * throw mapGeminiError(429, { error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }, response.headers);
 */
export function mapGeminiError(status: number, body: unknown, headers?: Headers, accepted?: boolean): ProviderError {
  const error = (body as Partial<GeminiErrorBody> | null)?.error;
  const rpcStatus = typeof error?.status === 'string' ? error.status : '';
  const message = typeof error?.message === 'string' ? error.message : '';
  const reasons = (error?.details ?? []).map((detail) => String(detail?.reason ?? ''));
  const retryAfter = readRetryAfter(headers) ?? retryDelay(error?.details);
  return new ProviderError(codeOf(status, rpcStatus, message, reasons), {
    accepted: accepted ?? !NOT_ACCEPTED.has(status),
    status,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });
}

function codeOf(status: number, rpcStatus: string, message: string, reasons: string[]): ErrorCode {
  if (status === 429 || rpcStatus === 'RESOURCE_EXHAUSTED') return 'upstream_busy';
  if (status === 503 || rpcStatus === 'UNAVAILABLE') return 'upstream_unavailable';
  if (status === 413 || /payload size exceeds|request (entity|payload) too large/i.test(message)) return 'request_too_large';
  // A bad key is answered 400 INVALID_ARGUMENT with reason API_KEY_INVALID: our configuration.
  if (reasons.includes('API_KEY_INVALID') || /api key not valid/i.test(message)) return 'upstream_error';
  if (status === 401 || status === 403 || status === 404 || rpcStatus === 'FAILED_PRECONDITION') return 'upstream_error';
  if (/token count.*exceeds|exceeds the maximum number of tokens|context (window|length)/i.test(message)) return 'context_length_exceeded';
  if (status >= 400 && status < 500) return 'invalid_request';
  return 'upstream_error';
}

/** `RetryInfo.retryDelay` ("41s", "0.5s") in whole seconds, at least 1. */
function retryDelay(details: GeminiErrorBody['error']['details']): number | undefined {
  for (const detail of details ?? []) {
    if (!String(detail?.['@type'] ?? '').endsWith('google.rpc.RetryInfo')) continue;
    const match = /^(\d+(?:\.\d+)?)s$/.exec(String(detail.retryDelay ?? ''));
    if (match) return Math.max(1, Math.ceil(Number(match[1])));
  }
  return undefined;
}
