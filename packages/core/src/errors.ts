/** The error families of the spec's Errors section. */
export type ErrorType = 'invalid_request_error' | 'insufficient_balance' | 'plan' | 'requests' | 'upstream_error' | 'server_error';

/**
 * Every error code of the spec's Errors table with its HTTP status and family.
 * Clients branch on the code; it is stable.
 */
export const ERROR_CATALOGUE = {
  invalid_request_body: { status: 400, type: 'invalid_request_error', message: 'The request body must be a JSON object with the fields of this endpoint.' },
  invalid_parameter: { status: 400, type: 'invalid_request_error', message: 'A field has a value this endpoint does not accept.' },
  duplicate_json_key: { status: 400, type: 'invalid_request_error', message: 'A JSON object in the body repeats a key.' },
  too_many_messages: { status: 400, type: 'invalid_request_error', message: 'messages holds more than 4,096 entries.' },
  request_too_complex: { status: 400, type: 'invalid_request_error', message: 'The body holds too many JSON values or nests too deeply.' },
  invalid_output_limit: { status: 400, type: 'invalid_request_error', message: 'max_tokens and max_completion_tokens must be positive integers.' },
  invalid_request: { status: 400, type: 'invalid_request_error', message: 'A message, part or tool has a shape the model does not take.' },
  remote_media: { status: 400, type: 'invalid_request_error', message: 'Media must be inline: send a data: URL, not a link.' },
  message_too_long: { status: 400, type: 'invalid_request_error', message: 'The last user message holds more than 8,000 bytes of text.' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error', message: 'The conversation is too long for the model.' },
  content_filter: { status: 400, type: 'invalid_request_error', message: 'The model provider declined the request.' },
  invalid_api_key: { status: 401, type: 'invalid_request_error', message: 'The API key is missing, unknown or revoked.' },
  invalid_token: { status: 401, type: 'invalid_request_error', message: 'The bearer token is not an API key of this service: send the whole sk_svc_ key.' },
  insufficient_balance: { status: 402, type: 'insufficient_balance', message: 'The balance is below the amount this request must hold.' },
  account_disabled: { status: 403, type: 'invalid_request_error', message: 'The account is disabled.' },
  account_deleted: { status: 403, type: 'invalid_request_error', message: 'The account is deleted.' },
  account_under_18: { status: 403, type: 'invalid_request_error', message: 'The account owner is under 18.' },
  model_requires_plan: { status: 403, type: 'plan', message: 'The model needs a higher plan.' },
  characters_app_only: { status: 403, type: 'invalid_request_error', message: 'Characters are available in the app only.' },
  model_not_found: { status: 404, type: 'invalid_request_error', message: "No model of this endpoint's type has that name." },
  request_timeout: { status: 408, type: 'invalid_request_error', message: 'The request body did not arrive within one minute.' },
  request_too_large: { status: 413, type: 'invalid_request_error', message: 'The request body is too large.' },
  rate_limit_exceeded: { status: 429, type: 'requests', message: 'The account used its requests per minute.' },
  concurrency_limit_exceeded: { status: 429, type: 'requests', message: 'The account has its maximum requests in flight; retry when one finishes.' },
  upstream_error: { status: 502, type: 'upstream_error', message: 'The model provider failed or did not answer.' },
  upstream_unavailable: { status: 502, type: 'upstream_error', message: 'The model provider is unavailable now; retry later or choose another model.' },
  upstream_retention: { status: 502, type: 'upstream_error', message: 'The provider did not confirm zero data retention for this model.' },
  service_unavailable: { status: 503, type: 'server_error', message: 'The service could not start the request; retry.' },
  server_busy: { status: 503, type: 'server_error', message: 'The service is busy; retry shortly.' },
  upstream_busy: { status: 503, type: 'upstream_error', message: 'The provider is overloaded; retry shortly.' },
  upstream_unattested: { status: 503, type: 'upstream_error', message: 'The attested endpoint could not be verified; retry shortly.' },
} as const satisfies Record<string, { status: number; type: ErrorType; message: string }>;

/** A stable error code of the spec. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The JSON error record: `{error: {message, type, param, code}}` and nothing else. */
export interface ErrorRecord {
  error: { message: string; type: ErrorType; param: null; code: ErrorCode };
}

/** Whether a string is a code of the catalogue. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_CATALOGUE, code);
}

/** Builds the error record of a code, with the catalogue's sentence unless a message is given. */
export function errorRecord(code: ErrorCode, message?: string): ErrorRecord {
  const entry = ERROR_CATALOGUE[code];
  return { error: { message: message ?? entry.message, type: entry.type, param: null, code } };
}
