import { GatewayError, type AccountState, type ErrorCode } from '@tollgate/core';
import { hashKey, isServiceKey, type Store } from '@tollgate/billing';
import type { AppPrincipal, Principal } from './gateway-options';
import type { KeyCache } from './key-cache';
import { trimOptionalWhitespace } from './trim-optional-whitespace';

const STATE_CODES: Record<Exclude<AccountState, 'active'>, ErrorCode> = {
  disabled: 'account_disabled',
  deleted: 'account_deleted',
  under_18: 'account_under_18',
};

/** The outcome of authentication: a principal, or the 401/403 to answer. */
export type AuthResult = { ok: true; principal: Principal } | { ok: false; error: GatewayError };

/**
 * Authenticates a request per spec Authentication 1–5. Keys are found through the gateway's key
 * cache (key-cache.ts): a key verified less than `keyCacheMs` ago is not asked of the store again,
 * and its account's state is checked on the cached record as on a fresh one. A change made through
 * this gateway's admin actions drops the cached key at once; any other change (another instance,
 * the CLI, the store written directly) is seen within `keyCacheMs` (docs/architecture.md, Key cache).
 * App users (non-`sk_` tokens) are never cached: their account is read on every request.
 */
export async function authenticate(
  request: Request,
  store: Store,
  keys: Pick<KeyCache, 'find'>,
  appAuthenticate?: (token: string, request: Request) => Promise<AppPrincipal | undefined>,
  hash: (key: string) => string | Promise<string> = hashKey,
): Promise<AuthResult> {
  const header = request.headers.get('authorization');
  if (header === null || header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return fail('invalid_api_key');
  // HTTP's optional whitespace only: a no-break space or a form feed beside a key is no whole sk_svc_ key.
  const token = trimOptionalWhitespace(header.slice(7));
  if (token.length === 0) return fail('invalid_api_key');
  if (token.startsWith('sk_')) {
    if (!isServiceKey(token)) return fail('invalid_api_key');
    const digest = hash(token);
    const looked = keys.find(typeof digest === 'string' ? digest : await digest);
    // A cache hit is a record, not a promise: no await (and no extra turn) on the hot path.
    const found = looked !== undefined && 'then' in looked ? await looked : looked;
    if (!found) return fail('invalid_api_key');
    return withState({ account: found.account, funding: 'credits', keyId: found.id, app: false });
  }
  if (appAuthenticate) {
    const app = await appAuthenticate(token, request);
    if (app) {
      const account = await store.getAccount(app.accountId);
      if (!account) return fail('invalid_token');
      return withState({ account, funding: app.funding, app: true });
    }
  }
  return fail('invalid_token');
}

function withState(principal: Principal): AuthResult {
  const state = principal.account.state;
  if (state !== 'active') return fail(STATE_CODES[state]);
  return { ok: true, principal };
}

function fail(code: ErrorCode): AuthResult {
  return { ok: false, error: new GatewayError(code) };
}
