import type { ErrorCode } from './errors';

/**
 * An expected refusal: a code of the spec's Errors table and what its reply needs. A library
 * returns it; the gateway turns it into the spec's error reply in one place.
 */
export interface Refusal<C extends ErrorCode = ErrorCode> {
  /** The stable code of the spec's Errors table. */
  code: C;
  /** A sentence for people; the catalogue's sentence when absent. */
  message?: string;
  /** Whole seconds a client should wait before retrying, for the codes that send `Retry-After`. */
  retryAfter?: number;
}

/**
 * The one result shape of every library: a value, or an error saying why not. Expected outcomes
 * (a refused request, a full balance) are results; exceptions are for faults.
 *
 * @example
 * const body = await readBody(request);
 * if (!body.ok) return new GatewayError(body.error.code, { message: body.error.message }).toResponse();
 * use(body.value);
 */
export type Result<T, E = Refusal> = { ok: true; value: T } | { ok: false; error: E };

/** A successful {@link Result}. */
export function ok<T>(value: T): { ok: true; value: T } {
  return { ok: true, value };
}

/** A failed {@link Result}. */
export function err<E>(error: E): { ok: false; error: E } {
  return { ok: false, error };
}
