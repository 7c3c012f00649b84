/** The google.rpc status Gemini answers with each HTTP status. */
const RPC_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Gemini's wording for each status, as its API returns it. */
const MESSAGES: Record<string, string> = {
  INVALID_ARGUMENT: 'Request contains an invalid argument.',
  UNAUTHENTICATED: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  PERMISSION_DENIED: 'The caller does not have permission',
  NOT_FOUND:
    'models/gemini-unknown is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.',
  RESOURCE_EXHAUSTED:
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
  INTERNAL: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  UNAVAILABLE: 'The model is overloaded. Please try again later.',
  DEADLINE_EXCEEDED: 'The request timed out. Please try again.',
};

/** A google.rpc.Status error body. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: Record<string, unknown>[] };
}

/** Options of {@link geminiErrorBody}. */
export interface GeminiErrorOptions {
  /** A provider-neutral code (`context_length_exceeded`, `invalid_api_key`...) or a google.rpc status name. */
  code?: string;
  message?: string;
  /** Seconds for `RetryInfo.retryDelay` (429 defaults to 1). */
  retryAfter?: number;
}

/**
 * The `{error: {code, message, status, details}}` body Gemini sends for a status: 429 carries
 * QuotaFailure and RetryInfo details, a bad key the ErrorInfo reason `API_KEY_INVALID`.
 */
export function geminiErrorBody(status: number, options: GeminiErrorOptions = {}): GeminiErrorBody {
  const { code } = options;
  let rpc = code && MESSAGES[code] ? code : (RPC_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT'));
  let message = MESSAGES[rpc] ?? MESSAGES.INTERNAL ?? '';
  const details: Record<string, unknown>[] = [];
  if (code === 'context_length_exceeded') message = 'The input token count (1048590) exceeds the maximum number of tokens allowed (1048576).';
  if (status === 413) message = 'Request payload size exceeds the limit: 20971520 bytes.';
  if (code === 'invalid_api_key') {
    message = 'API key not valid. Please pass a valid API key.';
    details.push({
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    });
  }
  if (code === 'rate_limit_exceeded') rpc = 'RESOURCE_EXHAUSTED';
  if (rpc === 'RESOURCE_EXHAUSTED') {
    details.push(
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [
          {
            quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
            quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
            quotaValue: '10',
          },
        ],
      },
      {
        '@type': 'type.googleapis.com/google.rpc.Help',
        links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
      },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${options.retryAfter ?? 1}s` },
    );
  }
  return { error: { code: status, message: options.message ?? message, status: rpc, ...(details.length > 0 ? { details } : {}) } };
}

/** A Gemini error reply: the status and its JSON body (Gemini sends no Retry-After header). */
export function geminiErrorResponse(status: number, options: GeminiErrorOptions = {}): Response {
  return new Response(JSON.stringify(geminiErrorBody(status, options), null, 2), {
    status,
    headers: { 'content-type': 'application/json; charset=UTF-8', vary: 'Origin, X-Origin, Referer' },
  });
}
