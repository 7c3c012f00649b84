import { GatewayError } from '@tollgate/core';
import { balanceJson, parseUsageQuery, usageJson } from './admin-wire';
import type { Principal } from './gateway-options';
import type { Runtime } from './runtime';

/**
 * A free read of the caller's own account (`GET /v1/balance`, `GET /v1/usage`): after
 * authentication and the account-state check, before the limiter, so it counts toward no rate
 * limit and takes no in-flight slot (docs/http-api.md).
 */
export type AccountRead = (runtime: Runtime, request: Request, principal: Principal) => Promise<Response>;

/** `GET /v1/balance`: `{object: "balance", balance_micros, held_micros, available_micros}`. */
export const handleBalance: AccountRead = async (runtime, _request, principal) => {
  const balance = await runtime.store.getBalance(principal.account.id);
  return runtime.replies.json(JSON.stringify(balanceJson(balance)));
};

/**
 * `GET /v1/usage?from=&to=&group_by=hour|day[&key_id=][&model=]`: the account's charges summed
 * per UTC period, key and model (`admin-wire.ts` reads the query). Any key of the account may read
 * the whole account's usage, as it may spend the whole account's balance.
 */
export const handleUsage: AccountRead = async (runtime, request, principal) => {
  const query = parseUsageQuery(new URL(request.url).searchParams);
  if (!query.ok) return runtime.replies.error(new GatewayError('invalid_parameter', { message: query.error.message }));
  const { from, to, groupBy, keyId, model } = query.value;
  const rows = await runtime.store.usage({
    accountId: principal.account.id,
    from,
    to,
    groupBy,
    ...(keyId !== undefined ? { keyId } : {}),
    ...(model !== undefined ? { model } : {}),
  });
  return runtime.replies.json(JSON.stringify(usageJson(query.value, rows)));
};
