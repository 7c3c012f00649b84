import { GatewayError, randomBase62, systemTimers, type Timers } from '@tollgate/core';
import { createLimiter, type Endpoint, type Lease } from '@tollgate/limiter';
import { createObfuscator } from '@tollgate/sse';
import { validateModelPrices } from '@tollgate/billing';
import { createCharacterMatcher, parseJsonStrict, readBody } from '@tollgate/validator';
import { authenticate } from './authenticate';
import { createAttestations } from './call-routes';
import { createCheckpoints } from './checkpoints';
import type { CreditHold } from './credit-hold';
import { checkLowBalance, watchBalances } from './events';
import type { ErrorContext, GatewayOptions, RequestLog } from './gateway-options';
import { type AccountRead, handleBalance, handleUsage } from './handle-account-reads';
import { handleChat } from './handle-chat';
import { fetchHandler } from './handle-fetch';
import { handleImages } from './handle-images';
import { handleResponses } from './handle-responses';
import { handleSearch } from './handle-search';
import { createKeyCache } from './key-cache';
import { createModelCatalogue } from './model-catalogue';
import { createReplies, errorCodeOf } from './reply';
import type { Handler, HandlerReply, Runtime } from './runtime';

/** A gateway: a bound `fetch` for any web-standard server, and shutdown support. */
export interface Gateway {
  /** Serves one request. Bound: `serve({ fetch: gateway.fetch })` works as it is. */
  fetch: (request: Request) => Promise<Response>;
  /** Requests (and streams) not finished yet. */
  readonly active: number;
  /** Resolves when no request is active (for graceful shutdown). */
  idle(): Promise<void>;
  /**
   * Drops a key from the verified-key cache (`keyCacheMs`), so its next request asks the store. The
   * admin actions given this gateway (`createAdminActions(store, { gateway })`) call it themselves;
   * call it after revoking a key through the store directly, in this process.
   */
  forgetKey(keyId: string): void;
  /** Drops every cached key of an account (its state or plan changed), so their next requests ask the store. */
  forgetAccount(accountId: string): void;
}

interface Route {
  method: 'GET' | 'POST';
  endpoint: Endpoint;
  handler?: Handler;
}

/** A free read of the caller's own account: authenticated and state-checked, never limited. */
interface ReadRoute {
  method: 'GET';
  read: AccountRead;
}

const DEFAULT_HOLD_TTL_MS = 15 * 60_000;
/**
 * Upstream silence that fails an open stream when `streamIdleTimeoutMs` is not set, and so the
 * client stall limit too when `clientStallTimeoutMs` is not: exported for a server that times its
 * connections after the gateway's own limits (examples/server/src/start-server.ts).
 */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 5 * 60_000;
/** The upstream's time to answer (headers; a stream's first event): the stream idle rule's 5 minutes. */
const DEFAULT_HEADERS_TIMEOUT_MS = 5 * 60_000;
/** A non-streamed body's time after its headers; both together are LiteLLM's 10-minute default. */
const DEFAULT_BODY_TIMEOUT_MS = 5 * 60_000;

/**
 * Creates the gateway: the spec's endpoints over the given store, limiter, providers and models.
 * Configuration errors (unknown providers, missing prices) throw here, never per request.
 *
 * @example
 * const gateway = createGateway({
 *   version: 'tollgate/0.1.0',
 *   store: memoryStore(),
 *   limiter: memoryLimiter(),
 *   providers: { local: openaiCompatible({ baseURL: 'http://127.0.0.1:8000/v1', apiKey: '…' }) },
 *   models: [{ id: 'fast', type: 'chat', provider: 'local', upstream: 'gpt-4o-mini', max_output_tokens: 4096,
 *     price: { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 100 } }],
 * });
 * serve({ fetch: gateway.fetch });
 */
export function createGateway(options: GatewayOptions): Gateway {
  validateModelPrices(options.models);
  const fetchPrice = options.fetchMicrosPerCall ?? 0;
  if (!Number.isSafeInteger(fetchPrice) || fetchPrice < 0) {
    throw new Error(`fetchMicrosPerCall must be a non-negative whole number of micro-dollars, not ${String(options.fetchMicrosPerCall)}`);
  }
  const now = options.now ?? Date.now;
  const timers = options.timers ?? systemTimers;
  const keys = createKeyCache(options.store, { keyCacheMs: options.keyCacheMs, now });
  const holdTtlMs = options.holdTtlMs ?? DEFAULT_HOLD_TTL_MS;
  const idleTimeoutMs = options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  const headersTimeoutMs = positive('upstreamHeadersTimeoutMs', options.upstreamHeadersTimeoutMs, DEFAULT_HEADERS_TIMEOUT_MS);
  const bodyTimeoutMs = positive('upstreamBodyTimeoutMs', options.upstreamBodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS);
  const runtime: Runtime = {
    options,
    store: options.store,
    catalogue: createModelCatalogue(options.models, options.providers, Math.floor(now() / 1000)),
    replies: createReplies(options.version),
    attestations: createAttestations({ ttlMs: options.attestationTtlMs ?? 5 * 60_000, timeoutMs: options.attestationTimeoutMs ?? 10_000, now, timers }),
    obfuscate: createObfuscator(),
    isCharacter: createCharacterMatcher(options.characters ?? []),
    now,
    timers,
    holdTtlMs,
    keepaliveMs: options.keepaliveMs ?? 25_000,
    idleTimeoutMs,
    clientStallTimeoutMs: positive('clientStallTimeoutMs', options.clientStallTimeoutMs, idleTimeoutMs),
    checkpoints: createCheckpoints({ store: options.store, timers, ttlMs: holdTtlMs }),
    headersTimeoutMs,
    bodyTimeoutMs,
    wholeCallMs: headersTimeoutMs + bodyTimeoutMs,
    reportError: () => {}, // replaced below, once the log plumbing exists
  };
  checkLowBalance(options.lowBalanceMicros);
  // Balance events: a read after each charged request, only when a hook is set.
  const watchBalance =
    options.onEvent && watchBalances({ store: options.store, onEvent: options.onEvent, lowBalanceMicros: options.lowBalanceMicros, now, timers });
  const limiter = createLimiter({
    store: options.limiter,
    now,
    leaseTtlMs: holdTtlMs,
    onStoreError: options.onLimiterError ?? 'closed',
    ...(options.sharedSearchFetchPerMinute !== undefined ? { sharedSearchFetchPerMinute: options.sharedSearchFetchPerMinute } : {}),
    ...(options.maxInFlight !== undefined ? { maxInFlight: options.maxInFlight } : {}),
  });
  const routes: Record<string, Route | ReadRoute> = {
    '/v1/models': { method: 'GET', endpoint: 'models' },
    '/v1/balance': { method: 'GET', read: handleBalance },
    '/v1/usage': { method: 'GET', read: handleUsage },
    '/v1/chat/completions': { method: 'POST', endpoint: 'chat', handler: handleChat },
    // The Responses API serves the chat models: it counts and is limited as chat.
    '/v1/responses': { method: 'POST', endpoint: 'chat', handler: handleResponses },
    '/v1/images/generations': { method: 'POST', endpoint: 'images', handler: handleImages },
    '/v1/search': { method: 'POST', endpoint: 'search', handler: handleSearch },
  };
  if (options.pageFetcher) routes['/v1/fetch'] = { method: 'POST', endpoint: 'fetch', handler: fetchHandler(options.pageFetcher, fetchPrice) };
  const { replies } = runtime;
  const basePath = normaliseBasePath(options.basePath);

  let active = 0;
  let idleWaiters: (() => void)[] = [];
  const finishOne = () => {
    active--;
    if (active === 0 && idleWaiters.length > 0) {
      for (const resolve of idleWaiters) resolve();
      idleWaiters = [];
    }
  };

  const serve = async (request: Request, log: Partial<RequestLog>): Promise<HandlerReply> => {
    const startedAt = now();
    const path = pathOf(request.url);
    log.path = path;
    log.method = request.method;
    const route = routes[basePath === '' ? path : underBase(path, basePath)];
    if (!route) return replies.plain(404, 'Not Found');
    if (request.method !== route.method) return replies.plain(405, 'Method Not Allowed');

    const auth = await authenticate(request, runtime.store, keys, options.authenticate, options.hashKey);
    if (!auth.ok) return replies.error(auth.error);
    const { principal } = auth;
    log.accountId = principal.account.id;
    if (principal.keyId) log.keyId = principal.keyId;
    log.funding = principal.funding;
    if ('read' in route) return route.read(runtime, request, principal);
    const account = { id: principal.account.id, plan: principal.account.plan };

    const admitted = await limiter.admit(account, route.endpoint);
    if (!admitted.ok) return replies.error(GatewayError.from(admitted.error));
    if (!route.handler) return replies.json(runtime.catalogue.listBody);

    const slot = await limiter.acquire(account, route.endpoint);
    if (!slot.ok) {
      // Refused by its slot: the request admit counted is given back (refused requests consume nothing).
      await limiter.refund(account, route.endpoint);
      return replies.error(GatewayError.from(slot.error));
    }
    const releaseSlot = keepLeaseAlive(slot.value, holdTtlMs, timers);
    let reply: HandlerReply | undefined;
    try {
      const read = await readBody(request, { startedAt, now, timers });
      if (!read.ok) return replies.error(GatewayError.from(read.error));
      const parsed = parseJsonStrict(read.value);
      if (!parsed.ok) return replies.error(GatewayError.from(parsed.error));
      const holds: CreditHold[] = [];
      try {
        reply = await route.handler(runtime, { request, principal, startedAt, body: parsed.value, log, releaseSlot, holds });
      } catch (error) {
        // Nothing was delivered (the client gets a 503): release what the request held, at once
        // (release after a settle does nothing), rather than leave it renewed for good.
        await Promise.all(holds.map((hold) => hold.release()));
        throw error;
      }
      return reply;
    } finally {
      // A stream frees its own slot when it ends; anything else (a whole reply, a refusal, a throw)
      // frees it here, awaited, so a client that sends its next request on this reply finds it free.
      if (reply === undefined || reply instanceof Response) await releaseSlot();
    }
  };

  /** Hands an error that escaped to `onError` and the log line (kind and id); never throws. */
  const report = (error: unknown, log: Partial<RequestLog>) => {
    const errorId = `err_${randomBase62(24)}`;
    log.errorKind = error instanceof Error ? error.name : typeof error;
    log.errorId = errorId;
    if (!options.onError) return;
    const context: ErrorContext = { errorId, method: log.method ?? '', path: log.path ?? '' };
    if (log.accountId !== undefined) context.accountId = log.accountId;
    if (log.requestId !== undefined) context.requestId = log.requestId;
    try {
      options.onError(error, context);
    } catch {
      // The embedder's hook failed too: the client's 503 and the log line stand.
    }
  };
  runtime.reportError = (error, context) => report(error, context.log);

  const fetch = async (request: Request): Promise<Response> => {
    active++;
    const startedAt = now();
    const log: Partial<RequestLog> = {};
    let reply: HandlerReply;
    try {
      reply = await serve(request, log);
    } catch (error) {
      // Never a 500 and never an internal detail: a store or limiter failure is a 503 the client may retry.
      report(error, log);
      log.code = 'service_unavailable';
      reply = replies.error('service_unavailable');
    }
    const response = reply instanceof Response ? reply : reply.response;
    const emit = () => {
      if (options.log) {
        const record: RequestLog = { method: '', path: '', ...log, status: response.status, latencyMs: now() - startedAt };
        record.code ??= errorCodeOf(response);
        options.log(record);
      }
      watchBalance?.(log);
      finishOne();
    };
    // A stream counts as active (for idle() and the log) until its settlement is written.
    if (reply instanceof Response) emit();
    else reply.finished.then(emit, emit);
    return response;
  };

  return {
    fetch,
    get active() {
      return active;
    },
    idle: () => (active === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    forgetKey: keys.forgetKey,
    forgetAccount: keys.forgetAccount,
  };
}

/**
 * Extends an in-flight lease every third of its TTL until released, so a long body read, upstream
 * call or stream keeps its slot while a crashed instance's slots still come back after one TTL.
 * Returns the release, which stops the timer; it never throws, and a second call releases nothing more.
 */
function keepLeaseAlive(lease: Lease, ttlMs: number, timers: Timers): () => Promise<void> {
  const everyMs = Math.max(1, Math.floor(ttlMs / 3));
  let released: Promise<void> | undefined;
  let timer: unknown;
  const arm = () => {
    timer = timers.setTimeout(() => {
      if (released) return;
      void lease.extend();
      arm();
    }, everyMs);
  };
  arm();
  return () => {
    if (!released) {
      timers.clearTimeout(timer);
      released = lease.release();
    }
    return released;
  };
}

/** A deadline option: a positive whole number of milliseconds, or the default. */
function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number of milliseconds, not ${String(value)}`);
  return value;
}

/** `basePath` without its trailing slash ('' for none); one that does not start with '/' is a configuration error. */
function normaliseBasePath(basePath: string | undefined): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (!basePath.startsWith('/') || basePath.includes('?') || basePath.includes('#')) {
    throw new Error(`basePath must be a path starting with "/", such as "/api", not ${JSON.stringify(basePath)}`);
  }
  return basePath.endsWith('/') ? basePath.slice(0, -1) : basePath;
}

/** The part of `path` after `basePath`, or '' (served by no route) when `path` is not under it. */
function underBase(path: string, basePath: string): string {
  return path.startsWith(basePath) && path.charCodeAt(basePath.length) === 47 ? path.slice(basePath.length) : '';
}

/** The path of an absolute request URL, without allocating a URL object. */
function pathOf(url: string): string {
  const scheme = url.indexOf('://');
  const start = url.indexOf('/', scheme < 0 ? 0 : scheme + 3);
  if (start < 0) return '/';
  let end = url.length;
  const query = url.indexOf('?', start);
  if (query >= 0) end = query;
  const hash = url.indexOf('#', start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}
