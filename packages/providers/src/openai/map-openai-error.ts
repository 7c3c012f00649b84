import { readRetryAfter } from '../http/read-retry-after';
import { ProviderError } from '../provider';

/** The fields of an OpenAI error body the mapping reads; everything else is ignored. */
interface ErrorFields {
  code?: unknown;
  type?: unknown;
  message?: unknown;
}

// moderation_blocked is what gpt-image-* models send (type image_generation_user_error).
const CONTENT_FILTER_CODES = new Set(['content_filter', 'content_policy_violation', 'moderation_blocked']);
// Compatible servers (vLLM, llama.cpp, TGI) often send 400 with no code; their sentences say it.
const CONTEXT_SENTENCE = /maximum context length|context window|context_length_exceeded|exceeds the context|too many tokens/i;
const OVERLOADED = /overload/i;

/**
 * Maps an upstream refusal to a ProviderError of the spec's catalogue: the one place where status
 * and error body decide the code. `status` is undefined for an error event inside a stream (the
 * upstream already answered 200). `body` is the parsed JSON error, or the raw text when it was not
 * JSON; it is read here and never copied into the error.
 *
 * @example
 * throw mapOpenAIError(response.status, await response.json(), response.headers);
 */
export function mapOpenAIError(status: number | undefined, body: unknown, headers?: Headers): ProviderError {
  const fields = errorFields(body);
  const code = typeof fields.code === 'string' ? fields.code : undefined;
  const text = typeof body === 'string' ? body : typeof fields.message === 'string' ? fields.message : '';
  const retryAfter = readRetryAfter(headers);
  const isContext = code === 'context_length_exceeded' || (code === undefined && CONTEXT_SENTENCE.test(text));
  const isFilter = code !== undefined && CONTENT_FILTER_CODES.has(code);

  if (status === undefined) {
    // Mid-stream: the upstream accepted the request; only the refusals a client can act on keep their code.
    if (isContext) return new ProviderError('context_length_exceeded', { accepted: true });
    if (isFilter) return new ProviderError('content_filter', { accepted: true });
    return new ProviderError('upstream_error', { accepted: true });
  }
  const base = { status, ...(retryAfter !== undefined ? { retryAfter } : {}) };
  if (status === 429) {
    // An exhausted upstream quota is our billing problem, not a passing overload; it did no work either way.
    if (code === 'insufficient_quota') return new ProviderError('upstream_error', { ...base, accepted: false });
    return new ProviderError('upstream_busy', { ...base, accepted: false });
  }
  if (status === 529) return new ProviderError('upstream_busy', { ...base, accepted: false });
  if (status === 503) return new ProviderError(OVERLOADED.test(text) ? 'upstream_busy' : 'upstream_unavailable', { ...base, accepted: false });
  if (status === 413) return new ProviderError('request_too_large', { ...base, accepted: true });
  // Our credential, our account or our configured model name: never the client's fault.
  if (status === 401 || status === 402 || status === 403 || status === 404) return new ProviderError('upstream_error', { ...base, accepted: true });
  if (status === 408) return new ProviderError('upstream_error', { ...base, accepted: true });
  if (status >= 400 && status < 500) {
    if (isContext) return new ProviderError('context_length_exceeded', { ...base, accepted: true });
    if (isFilter) return new ProviderError('content_filter', { ...base, accepted: true });
    return new ProviderError('invalid_request', { ...base, accepted: true });
  }
  return new ProviderError('upstream_error', { ...base, accepted: true });
}

function errorFields(body: unknown): ErrorFields {
  if (!body || typeof body !== 'object') return {};
  const error = (body as { error?: unknown }).error;
  if (error && typeof error === 'object') return error as ErrorFields;
  // Some compatible servers put the fields at the top level: {"object":"error","message":...}.
  return body as ErrorFields;
}
