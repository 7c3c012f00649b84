import { ProviderError } from '../provider';

/** The fields of an OpenAI error body the mapping reads; everything else is ignored. */
interface ErrorFields {
  code?: unknown;
  type?: unknown;
  message?: unknown;
}

const CONTENT_FILTER_CODES = new Set(['content_filter', 'content_policy_violation']);
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

// Failures where no connection was made, so the upstream cannot have seen the request.
const CONNECT_FAILURES = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT|ConnectionRefused|connection refused|dns error/i;

/**
 * Maps a rejected `fetch` (no response at all): a connection that could not be made is
 * `upstream_unavailable` and not accepted (failover may try the next route); anything else
 * (reset, timeout) may have reached the upstream and is `upstream_error`.
 */
export function mapFetchFailure(error: unknown): ProviderError {
  if (CONNECT_FAILURES.test(describe(error))) return new ProviderError('upstream_unavailable', { accepted: false });
  return new ProviderError('upstream_error', { accepted: true });
}

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

function errorFields(body: unknown): ErrorFields {
  if (!body || typeof body !== 'object') return {};
  const error = (body as { error?: unknown }).error;
  if (error && typeof error === 'object') return error as ErrorFields;
  // Some compatible servers put the fields at the top level: {"object":"error","message":...}.
  return body as ErrorFields;
}

/** Seconds to wait from `retry-after-ms` or `Retry-After` (delta-seconds or an HTTP date). */
export function readRetryAfter(headers: Headers | undefined, now: () => number = Date.now): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.max(1, Math.ceil(Number(ms) / 1000));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) : (Date.parse(value) - now()) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.max(1, Math.ceil(seconds));
}

/** Reads at most 64 KiB of an error body, parsed as JSON when it is JSON, else the text. */
export async function readErrorBody(response: Response): Promise<unknown> {
  const limit = 64 * 1024;
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body cut mid-way still maps by its status.
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const text = new TextDecoder().decode(bytes.subarray(0, limit));
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
