import type { GatewayError } from '@tollgate/core';
import type { CreditHold } from './credit-hold';
import type { StartedHeaders } from './reply';
import type { MeteredContext, Runtime } from './runtime';

/** Releases the hold of a request whose upstream failed, and answers the mapped error. */
export async function failed(runtime: Runtime, context: MeteredContext, hold: CreditHold, started: StartedHeaders, error: GatewayError): Promise<Response> {
  await hold.release();
  context.log.code = error.code;
  context.log.costMicros = 0;
  return runtime.replies.error(error, started);
}
