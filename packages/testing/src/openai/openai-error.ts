/** Options of {@link openaiErrorResponse}. */
export interface OpenAIErrorOptions {
  /** The error's `code`; defaults by status (`invalid_api_key` on 401, `rate_limit_exceeded` on 429...). */
  code?: string | null;
  /** The error's `message`; defaults to OpenAI's sentence for the status and code. */
  message?: string;
  /** The error's `param`. */
  param?: string | null;
  /** Seconds for `Retry-After` (429 and 503); 429 defaults to 1. */
  retryAfter?: number;
  /** The whole body, as sent, instead of the envelope. */
  body?: string;
}

interface Defaults {
  type: string | null;
  code: string | null;
  message: string;
  param?: string | null;
}

// OpenAI's own wording, as its API returns it, so adapters are tested against the real shapes.
const BY_CODE: Record<string, Defaults> = {
  invalid_api_key: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided: sk-fake***. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  context_length_exceeded: {
    type: 'invalid_request_error',
    code: 'context_length_exceeded',
    param: 'messages',
    message:
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130021 tokens. Please reduce the length of the messages.",
  },
  content_filter: {
    type: 'invalid_request_error',
    code: 'content_filter',
    param: 'prompt',
    message: "The response was filtered due to the prompt triggering OpenAI's content management policy. Please modify your prompt and retry.",
  },
  content_policy_violation: {
    type: 'invalid_request_error',
    code: 'content_policy_violation',
    message: 'Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.',
  },
  model_not_found: {
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: 'The model `unknown` does not exist or you do not have access to it.',
  },
  rate_limit_exceeded: {
    type: 'requests',
    code: 'rate_limit_exceeded',
    message:
      'Rate limit reached for gpt-4o-mini in organization org-fake on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits to learn more.',
  },
  insufficient_quota: {
    type: 'insufficient_quota',
    code: 'insufficient_quota',
    message: 'You exceeded your current quota, please check your plan and billing details.',
  },
};

/** A code's defaults; every code named here is in {@link BY_CODE}, so the throw never runs. */
function byCode(code: string): Defaults {
  const defaults = BY_CODE[code];
  if (defaults === undefined) throw new Error(`openai-error: no defaults for ${code}`);
  return defaults;
}

const BY_STATUS: Record<number, Defaults> = {
  400: { type: 'invalid_request_error', code: null, message: 'Invalid request.' },
  401: byCode('invalid_api_key'),
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory', message: 'Country, region, or territory not supported' },
  404: byCode('model_not_found'),
  413: { type: 'invalid_request_error', code: null, message: 'Request too large.' },
  429: byCode('rate_limit_exceeded'),
  500: { type: 'server_error', code: null, message: 'The server had an error while processing your request. Sorry about that!' },
  502: { type: 'server_error', code: null, message: 'Bad gateway.' },
  // A plain 503 is an unavailable upstream; pass OpenAI's 'The server is overloaded or not ready yet.' as the message for an overloaded one.
  503: { type: 'server_error', code: null, message: 'The service is temporarily unavailable. Please try again later.' },
};

/** The `{"error":{message,type,param,code}}` body OpenAI sends for a status and code. */
export function openaiErrorBody(status: number, options: OpenAIErrorOptions = {}): string {
  if (options.body !== undefined) return options.body;
  const defaults = (options.code ? BY_CODE[options.code] : undefined) ??
    BY_STATUS[status] ?? {
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      code: null,
      message: `Upstream error ${status}.`,
    };
  return JSON.stringify({
    error: {
      message: options.message ?? defaults.message,
      type: defaults.type,
      param: options.param !== undefined ? options.param : (defaults.param ?? null),
      code: options.code !== undefined ? options.code : defaults.code,
    },
  });
}

/**
 * An OpenAI error reply: the status, the JSON body, and `Retry-After` on 429 (and on 503 when set).
 *
 * @example
 * return openaiErrorResponse(400, { code: 'context_length_exceeded' });
 */
export function openaiErrorResponse(status: number, options: OpenAIErrorOptions = {}): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-request-id': 'req_fake_error' };
  const retryAfter = options.retryAfter ?? (status === 429 ? 1 : undefined);
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  return new Response(openaiErrorBody(status, options), { status, headers });
}
