import type { ErrorCode, Refusal } from '@tollgate/core';

/** A refusal of the validator: it always carries a sentence that names the field. */
export interface Invalid extends Refusal {
  /** A sentence for people; names the field for `invalid_parameter`. */
  message: string;
}

/** A failed result of the validator. */
export type Fail = { ok: false; error: Invalid };

/** Builds a {@link Fail}. */
export function fail(code: ErrorCode, message: string): Fail {
  return { ok: false, error: { code, message } };
}
