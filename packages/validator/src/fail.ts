import type { ErrorCode } from '@tollgate/core';

/** A refusal: a code of the spec's catalogue and a sentence for people. */
export interface Fail {
  ok: false;
  /** The stable code of the spec's Errors table. */
  code: ErrorCode;
  /** A sentence for people; names the field for `invalid_parameter`. */
  message: string;
}

/** Builds a {@link Fail}. */
export function fail(code: ErrorCode, message: string): Fail {
  return { ok: false, code, message };
}
