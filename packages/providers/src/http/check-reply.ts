import * as v from 'valibot';
import { ProviderError } from '../provider';

/**
 * Checks an upstream's JSON against its wire schema and returns the checked value. A reply that
 * does not match is the spec's `upstream_error`, raised after the upstream accepted the request
 * (so no other route is tried). Only whole replies and the fields an adapter reads are checked:
 * the first issue ends the check, which keeps it cheap.
 *
 * @example
 * const reply = checkReply(geminiResponseSchema, await response.json(), response.status);
 */
export function checkReply<const S extends v.GenericSchema>(schema: S, value: unknown, status: number | undefined): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: true });
  if (!result.success) throw new ProviderError('upstream_error', status === undefined ? { accepted: true } : { accepted: true, status });
  return result.output;
}
