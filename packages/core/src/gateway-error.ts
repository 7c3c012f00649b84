import { ERROR_CATALOGUE, errorRecord, type ErrorCode, type ErrorType } from './errors';
import { HEADER } from './headers';
import type { Refusal } from './result';

/** Options of a {@link GatewayError}. */
export interface GatewayErrorOptions {
  /** A sentence for people; defaults to the catalogue's. */
  message?: string;
  /** Whole seconds the client should wait before retrying (at least 1). */
  retryAfter?: number;
}

/**
 * A refusal with a code of the spec's catalogue. Libraries return result objects for expected
 * outcomes; the gateway turns them into this error's `toResponse()` in one place.
 *
 * @example
 * return new GatewayError('rate_limit_exceeded', { retryAfter: 2 }).toResponse({ 'X-Service-Version': 'v1' });
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly type: ErrorType;
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, options: GatewayErrorOptions = {}) {
    const entry = ERROR_CATALOGUE[code];
    super(options.message ?? entry.message);
    this.name = 'GatewayError';
    this.code = code;
    this.status = entry.status;
    this.type = entry.type;
    this.retryAfter = options.retryAfter === undefined ? undefined : retryAfterSeconds(options.retryAfter);
  }

  /**
   * The error of a library's refusal, with its message and `retryAfter`.
   *
   * @example
   * if (!parsed.ok) return GatewayError.from(parsed.error).toResponse();
   */
  static from(refusal: Refusal): GatewayError {
    const options: GatewayErrorOptions = {};
    if (refusal.message !== undefined) options.message = refusal.message;
    if (refusal.retryAfter !== undefined) options.retryAfter = refusal.retryAfter;
    return new GatewayError(refusal.code, options);
  }

  /** The error record of this error. */
  toJSON() {
    return errorRecord(this.code, this.message);
  }

  /** The JSON error reply, with `Retry-After` when set (always on 429) and the given headers. */
  toResponse(headers: Record<string, string> = {}): Response {
    const out: Record<string, string> = { 'content-type': 'application/json', ...headers };
    const retryAfter = this.retryAfter ?? (this.status === 429 ? 1 : undefined);
    if (retryAfter !== undefined) out[HEADER.retryAfter] = String(retryAfter);
    return new Response(JSON.stringify(this.toJSON()), { status: this.status, headers: out });
  }
}

/** Whole seconds for `Retry-After`: rounded up, at least 1. */
export function retryAfterSeconds(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds < 1) return 1;
  return Math.ceil(seconds);
}
