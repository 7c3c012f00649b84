/** The HTTP status of each Anthropic error type. */
export const ANTHROPIC_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** The error type Anthropic answers with a status (the reverse of {@link ANTHROPIC_ERROR_STATUS}). */
export function anthropicErrorType(status: number): string {
  for (const [type, code] of Object.entries(ANTHROPIC_ERROR_STATUS)) if (code === status) return type;
  return status >= 500 ? 'api_error' : 'invalid_request_error';
}

/**
 * An error reply as the Messages API sends it: `{type:'error', error:{type, message}, request_id}`
 * with the status of its type, JSON, and `request-id` (plus any headers given, e.g. retry-after).
 */
export function anthropicErrorResponse(
  type: string,
  message: string,
  headers: Record<string, string> = {},
  status = ANTHROPIC_ERROR_STATUS[type] ?? 500,
): Response {
  const requestId = 'req_011CFakeAnthropicError';
  return new Response(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }), {
    status,
    headers: { 'content-type': 'application/json', 'request-id': requestId, ...headers },
  });
}

/** Anthropic's wording for each error type, as its API returns it. */
const MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request',
  authentication_error: 'invalid x-api-key',
  billing_error: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
  permission_error: 'Your API key does not have permission to use the specified resource.',
  not_found_error: 'model: claude-unknown',
  request_too_large: 'Request exceeds the maximum allowed number of bytes.',
  rate_limit_error:
    'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.',
  api_error: 'Internal server error',
  overloaded_error: 'Overloaded',
};

/**
 * Provider-neutral fault codes (the OpenAI fake's names) in Anthropic terms, so one conformance
 * suite can ask every fake for "the context is too long" and get each API's own reply.
 */
const NEUTRAL: Record<string, { type: string; message: string }> = {
  context_length_exceeded: { type: 'invalid_request_error', message: 'prompt is too long: 210034 tokens > 200000 maximum' },
  content_filter: { type: 'invalid_request_error', message: 'Output blocked by content filtering policy' },
  invalid_api_key: { type: 'authentication_error', message: 'invalid x-api-key' },
  model_not_found: { type: 'not_found_error', message: 'model: claude-unknown' },
  rate_limit_exceeded: { type: 'rate_limit_error', message: MESSAGES.rate_limit_error ?? '' },
  // An account out of credit is a 400 invalid_request_error on the wire, not the documented 402.
  insufficient_quota: {
    type: 'invalid_request_error',
    message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
  },
};

/** The type and message of an error for a status and an optional neutral code or Anthropic type. */
export function anthropicErrorFor(status: number, code?: string, message?: string): { type: string; message: string } {
  const neutral = code ? NEUTRAL[code] : undefined;
  const type = neutral?.type ?? (code && MESSAGES[code] ? code : anthropicErrorType(status));
  return { type, message: message ?? neutral?.message ?? MESSAGES[type] ?? 'Internal server error' };
}
