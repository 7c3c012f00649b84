import { MAX_PAGE_LIMIT, type Store } from '@tollgate/billing';
import { hasControlCharacter } from '@tollgate/core';
import { parseJsonStrict, readBody } from '@tollgate/validator';
import { type AdminActionsOptions, type AdminRefusal, type AdminResult, createAdminActions } from './admin-actions';
import type { EventHook } from './events';
import { trimOptionalWhitespace } from './trim-optional-whitespace';
import { accountJson, balanceJson, entryJson, keyJson, parseUsageQuery, usageJson } from './admin-wire';

/** Options of {@link createAdminApi}. */
export interface AdminApiOptions {
  /** The store the gateway serves from. */
  store: Store;
  /** The operator's bearer token: at least 16 characters. */
  token: string;
  /** The clock (unix milliseconds), for the body deadline; default `Date.now`. */
  now?: () => number;
  /** Errors that became a 503 (a store down): for the operator's log. Never throws into the reply. */
  onError?: (error: unknown) => void;
  /** Told `key.revoked` when a call revokes a live key (docs/events.md); never awaited. */
  onEvent?: EventHook;
  /**
   * The gateway serving this store in this process: a key revoked, or an account's state or plan
   * set, through this API is dropped from its key cache before the reply, so its next request there
   * sees the change; without it, within `keyCacheMs` (docs/architecture.md, Key cache).
   */
  gateway?: AdminActionsOptions['gateway'];
}

/** The admin API: a bound web-standard `fetch` handler. */
export interface AdminApi {
  /** Serves one request. Bound: `app.all('/admin/*', (c) => admin.fetch(c.req.raw))` works as it is. */
  fetch: (request: Request) => Promise<Response>;
}

/** Where the admin routes live. */
export const ADMIN_BASE_PATH = '/admin/v1';

/** Error codes of the admin API; their envelope is the gateway's `{error: {message, type, param, code}}`. */
type AdminCode =
  | AdminRefusal['code']
  | 'invalid_admin_token'
  | 'method_not_allowed'
  | 'invalid_request_body'
  | 'request_too_large'
  | 'request_timeout'
  | 'service_unavailable';

const STATUS: Record<AdminCode, number> = {
  invalid_parameter: 400,
  invalid_request_body: 400,
  invalid_admin_token: 401,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  request_too_large: 413,
  service_unavailable: 503,
};

/** A JSON body of at most this many bytes, within this long. */
const MAX_BODY_BYTES = 64 * 1024;
const BODY_TIMEOUT_MS = 10_000;

interface Call {
  request: Request;
  params: URLSearchParams;
  /** The account or key id of the path, decoded ('' for the accounts collection). */
  id: string;
  body: Record<string, unknown>;
}

interface RouteSpec {
  /** Query parameters the route takes; any other is refused. */
  query?: readonly string[];
  /** Body fields the route takes (a JSON object); absent: the route takes no body. */
  body?: readonly string[];
  run(call: Call): Promise<Response>;
}

type Methods = Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', RouteSpec>>;

/**
 * The operator's HTTP API under `/admin/v1` (docs/admin-api.md): accounts, keys, credits (with an
 * `Idempotency-Key`), balances, ledger entries and usage, JSON in and out, behind
 * `Authorization: Bearer <token>` checked in constant time. Web standards only: mount it on any
 * server, on a port the public cannot reach.
 *
 * @example
 * const admin = createAdminApi({ store, gateway, token: process.env.TOLLGATE_ADMIN_TOKEN });
 * const reply = await admin.fetch(new Request('http://admin/admin/v1/accounts', {
 *   method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ plan: 'plus' }),
 * }));
 */
export function createAdminApi(options: AdminApiOptions): AdminApi {
  if (typeof options.token !== 'string' || options.token.length < 16) throw new Error('the admin token must be a string of at least 16 characters');
  const now = options.now ?? Date.now;
  const actions = createAdminActions(options.store, {
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.gateway ? { gateway: options.gateway } : {}),
  });
  const expected = digest(options.token);

  const page = (params: URLSearchParams): AdminResult<{ limit?: number; cursor?: string }> => {
    const out: { limit?: number; cursor?: string } = {};
    const limit = params.get('limit');
    if (limit !== null) {
      if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_PAGE_LIMIT) {
        return { ok: false, error: { code: 'invalid_parameter', param: 'limit', message: `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.` } };
      }
      out.limit = Number(limit);
    }
    const cursor = params.get('cursor');
    if (cursor !== null) out.cursor = cursor;
    return { ok: true, value: out };
  };
  const listed = <T>(result: AdminResult<{ items: T[]; next?: string }>, each: (item: T) => unknown) =>
    answer(result, (value) => ({ object: 'list', data: value.items.map(each), next_cursor: value.next ?? null }));

  const accounts: Methods = {
    GET: { query: ['limit', 'cursor'], run: async ({ params }) => withPage(params, page, (p) => actions.listAccounts(p).then((r) => listed(r, accountJson))) },
    POST: { body: ['plan'], run: async ({ body }) => answer(await actions.createAccount({ plan: body.plan }), accountJson, 201) },
  };
  const account: Methods = { GET: { run: async ({ id }) => answer(await actions.getAccount(id), accountJson) } };
  const accountPlan: Methods = { PUT: { body: ['plan'], run: async ({ id, body }) => answer(await actions.setPlan(id, need(body, 'plan')), accountJson) } };
  const accountState: Methods = {
    PUT: { body: ['state'], run: async ({ id, body }) => answer(await actions.setAccountState(id, need(body, 'state')), accountJson) },
  };
  const accountKeys: Methods = {
    GET: { run: async ({ id }) => answer(await actions.listKeys(id), (keys) => ({ object: 'list', data: keys.map(keyJson), next_cursor: null })) },
    POST: {
      body: ['name'],
      run: async ({ id, body }) =>
        answer(await actions.createKey(id, need(body, 'name')), (created) => ({ ...keyJson(created.key), secret: created.secret }), 201),
    },
  };
  const accountCredits: Methods = {
    POST: {
      body: ['micros', 'note'],
      run: async ({ id, body, request }) => {
        const idempotencyKey = request.headers.get('idempotency-key');
        if (idempotencyKey === null)
          return error('invalid_parameter', 'The Idempotency-Key header is required: a credit is added once per key.', 'Idempotency-Key');
        const input: { micros: unknown; idempotencyKey: string; note?: unknown } = { micros: need(body, 'micros'), idempotencyKey };
        if (body.note !== undefined) input.note = body.note;
        const result = await actions.addCredits(id, input);
        if (!result.ok) return refused(result.error);
        const { entry, balance, replayed } = result.value;
        const reply = { object: 'credit', entry: entry === undefined ? null : entryJson(entry), balance: { account_id: id, ...balanceJson(balance) } };
        return json(reply, replayed ? 200 : 201, replayed ? { 'idempotent-replayed': 'true' } : { 'idempotent-replayed': 'false' });
      },
    },
  };
  const accountBalance: Methods = {
    GET: { run: async ({ id }) => answer(await actions.getBalance(id), (balance) => ({ ...balanceJson(balance), account_id: id })) },
  };
  const accountEntries: Methods = {
    GET: {
      query: ['limit', 'cursor'],
      run: async ({ id, params }) => withPage(params, page, (p) => actions.listEntries(id, p).then((r) => listed(r, entryJson))),
    },
  };
  const accountUsage: Methods = {
    GET: {
      query: ['from', 'to', 'group_by', 'key_id', 'model'],
      run: async ({ id, params }) => {
        const query = parseUsageQuery(params);
        if (!query.ok) return refused(query.error);
        return answer(await actions.usage(id, query.value), (rows) => ({ account_id: id, ...usageJson(query.value, rows) }));
      },
    },
  };
  const key: Methods = {
    GET: { run: async ({ id }) => answer(await actions.getKey(id), keyJson) },
    PATCH: { body: ['name'], run: async ({ id, body }) => answer(await actions.renameKey(id, need(body, 'name')), keyJson) },
  };
  const keyRevoke: Methods = { POST: { body: [], run: async ({ id }) => answer(await actions.revokeKey(id), keyJson) } };
  const keyBudget: Methods = {
    PUT: {
      body: ['micros', 'period'],
      run: async ({ id, body }) => answer(await actions.setKeyBudget(id, { micros: need(body, 'micros'), period: need(body, 'period') }), keyJson),
    },
    DELETE: { body: [], run: async ({ id }) => answer(await actions.setKeyBudget(id, null), keyJson) },
  };

  /** `/admin/v1/accounts/{id}/<sub>`. */
  const accountSubs: Record<string, Methods> = {
    plan: accountPlan,
    state: accountState,
    keys: accountKeys,
    credits: accountCredits,
    balance: accountBalance,
    entries: accountEntries,
    usage: accountUsage,
  };
  /** The route of a path below the base: its methods and the id segment. */
  const route = (segments: string[]): { methods: Methods; id: string } | undefined => {
    const [resource, id, sub, ...rest] = segments;
    if (rest.length > 0) return undefined;
    if (resource === 'accounts') {
      if (id === undefined) return { methods: accounts, id: '' };
      if (sub === undefined) return { methods: account, id };
      const methods = Object.hasOwn(accountSubs, sub) ? accountSubs[sub] : undefined;
      return methods && { methods, id };
    }
    if (resource === 'keys' && id !== undefined) {
      if (sub === undefined) return { methods: key, id };
      if (sub === 'revoke') return { methods: keyRevoke, id };
      if (sub === 'budget') return { methods: keyBudget, id };
    }
    return undefined;
  };

  const serve = async (request: Request): Promise<Response> => {
    const startedAt = now();
    if (!(await authorized(request.headers.get('authorization'), expected))) {
      return error('invalid_admin_token', 'The admin token is missing or wrong: send Authorization: Bearer <TOLLGATE_ADMIN_TOKEN>.', null, {
        'www-authenticate': 'Bearer',
      });
    }
    const url = new URL(request.url);
    const segments = segmentsUnder(url.pathname);
    const found = segments && route(segments);
    if (!found) return error('not_found', `No admin route ${url.pathname}.`);
    const method = request.method as keyof Methods;
    const spec = Object.hasOwn(found.methods, method) ? found.methods[method] : undefined;
    if (!spec) {
      const allow = Object.keys(found.methods).join(', ');
      return error('method_not_allowed', `${request.method} is not allowed here; allowed: ${allow}.`, null, { allow });
    }
    const params = url.searchParams;
    const takes = new Set(spec.query ?? []);
    for (const name of params.keys()) if (!takes.has(name)) return error('invalid_parameter', `${name} is not a query parameter of this route.`, name);
    for (const name of takes) if (params.getAll(name).length > 1) return error('invalid_parameter', `${name} is given more than once.`, name);
    let body: Record<string, unknown> = {};
    if (spec.body !== undefined) {
      const read = await readBody(request, { maxBytes: MAX_BODY_BYTES, timeoutMs: BODY_TIMEOUT_MS, startedAt, now });
      if (!read.ok)
        return error(
          read.error.code === 'request_timeout' ? 'request_timeout' : read.error.code === 'request_too_large' ? 'request_too_large' : 'invalid_request_body',
          read.error.message ?? 'The body could not be read.',
        );
      if (read.value.length > 0) {
        const parsed = parseJsonStrict(read.value, { maxValues: 1_000, maxDepth: 10 });
        if (!parsed.ok)
          return error('invalid_request_body', `The body must be one JSON object without repeated keys (${parsed.error.message ?? parsed.error.code}).`);
        body = parsed.value;
      }
      const fields = new Set(spec.body);
      for (const name of Object.keys(body))
        if (!fields.has(name)) return error('invalid_parameter', `${name} is not a field of this route (${[...fields].join(', ') || 'it takes none'}).`, name);
    }
    return spec.run({ request, params, id: found.id, body });
  };

  return {
    fetch: async (request) => {
      try {
        return await serve(request);
      } catch (caught) {
        if (caught instanceof Missing) return error('invalid_parameter', `${caught.field} is required.`, caught.field);
        try {
          options.onError?.(caught);
        } catch {
          // The operator's hook failed too: the 503 stands.
        }
        return error('service_unavailable', 'The store could not answer; retry.');
      }
    },
  };
}

/** A required body field that is absent: `invalid_parameter` naming it. */
class Missing extends Error {
  constructor(readonly field: string) {
    super(`${field} is required`);
  }
}

function need(body: Record<string, unknown>, field: string): unknown {
  if (body[field] === undefined) throw new Missing(field);
  return body[field];
}

async function withPage<T>(params: URLSearchParams, page: (params: URLSearchParams) => AdminResult<T>, run: (page: T) => Promise<Response>): Promise<Response> {
  const parsed = page(params);
  return parsed.ok ? run(parsed.value) : refused(parsed.error);
}

/** The path's segments below `/admin/v1`, decoded; undefined when it is not below it or does not decode. */
function segmentsUnder(pathname: string): string[] | undefined {
  if (!pathname.startsWith(`${ADMIN_BASE_PATH}/`)) return undefined;
  const raw = pathname.slice(ADMIN_BASE_PATH.length + 1).split('/');
  if (raw.at(-1) === '') raw.pop();
  try {
    const segments = raw.map((segment) => decodeURIComponent(segment));
    return segments.every((segment) => segment.length > 0 && segment.length <= 200 && !hasControlCharacter(segment)) ? segments : undefined;
  } catch {
    return undefined;
  }
}

const encoder = new TextEncoder();

function digest(text: string): Promise<Uint8Array> {
  return crypto.subtle.digest('SHA-256', encoder.encode(text)).then((buffer) => new Uint8Array(buffer));
}

/**
 * Whether the `Authorization` header carries the admin token, in constant time: both sides are
 * hashed to 32 bytes (so neither the length nor the first differing byte shows in the timing) and
 * every byte is compared, differences OR-ed together. A missing header is hashed too.
 */
async function authorized(header: string | null, expected: Promise<Uint8Array>): Promise<boolean> {
  const bearer = header !== null && header.length > 7 && header.slice(0, 7).toLowerCase() === 'bearer ';
  const presented = await digest(bearer ? trimOptionalWhitespace(header.slice(7)) : '');
  const wanted = await expected;
  let difference = 0;
  for (let index = 0; index < wanted.length; index++) difference |= (wanted[index] as number) ^ (presented[index] as number);
  return bearer && difference === 0;
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } });
}

function error(code: AdminCode, message: string, param: string | null = null, headers: Record<string, string> = {}): Response {
  const type = code === 'service_unavailable' ? 'server_error' : 'invalid_request_error';
  return json({ error: { message, type, param, code } }, STATUS[code], headers);
}

function refused(refusal: AdminRefusal): Response {
  return error(refusal.code, refusal.message, refusal.param ?? null);
}

function answer<T>(result: AdminResult<T>, shape: (value: T) => unknown, status = 200): Response {
  return result.ok ? json(shape(result.value), status) : refused(result.error);
}
