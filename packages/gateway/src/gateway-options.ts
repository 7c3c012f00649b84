import type { Account, Funding, ModelConfig, Timers } from '@tollgate/core';
import type { Store } from '@tollgate/billing';
import type { LimiterStore } from '@tollgate/limiter';
import type { PageFetcher, Provider } from '@tollgate/providers';
import type { EventHook } from './events';

/** A principal the embedding app admits: its own signed-in user acting for an account. */
export interface AppPrincipal {
  /** The account the user acts for; it shares that account's limits. */
  accountId: string;
  /** How the app's use is paid: the plan's `included` use, or the account's `credits`. */
  funding: Funding;
}

/** One line of the gateway's request log: never a key, never an upstream body. */
export interface RequestLog {
  requestId?: string;
  method: string;
  path: string;
  status: number;
  code?: string;
  accountId?: string;
  keyId?: string;
  /** How the request was paid: `credits` (charged) or `included` (the plan's use, not charged). */
  funding?: string;
  model?: string;
  provider?: string;
  stream?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  costMicros?: number;
  /**
   * Tokens the upstream reported beyond the limits the gateway sent it (completion tokens past the
   * output limit, prompt tokens past the hold's prompt bound): not billed, since a charge never
   * exceeds the hold. Absent when the usage was within the limits.
   */
  usageOverLimit?: { promptTokens: number; completionTokens: number };
  /** How a request or stream ended: `done`, `no_usage`, `incomplete`, `client_gone`, `upstream_failed`. */
  outcome?: string;
  latencyMs: number;
  /** The kind (`name`) of an error that escaped, answered 503 `service_unavailable`; its details went to `onError`. */
  errorKind?: string;
  /** The id `onError` got with that error, to find one from the other. */
  errorId?: string;
}

/** What `onError` is told besides the error: never a key, a body or a credential. */
export interface ErrorContext {
  /** An id for this error (`err_` + 24 characters), also in the request log line as `errorId`. */
  errorId: string;
  method: string;
  /** The path as requested (with `basePath`, when one is set). */
  path: string;
  /** The account, once the request was authenticated. */
  accountId?: string;
  /** The request id, once the request started (was held for). */
  requestId?: string;
}

/** Options of {@link createGateway}. */
export interface GatewayOptions {
  /** `X-Service-Version` on every reply, e.g. `tollgate/0.1.0`. */
  version: string;
  /** Accounts, keys and the ledger: `memoryStore()`, `sqliteStore(path)`, `postgresStore(url)`. */
  store: Store;
  /** Where limits keep their state: `memoryLimiter()` or `redisLimiter(redis)`. */
  limiter: LimiterStore;
  /** Upstream adapters by name; models' routes name these keys. */
  providers: Record<string, Provider>;
  /**
   * A path prefix the API is mounted under, e.g. `/api`: then `/api/v1/chat/completions` is served
   * and every path outside the prefix (`/v1/models` included) is the spec's plain-text 404. A
   * trailing slash is ignored; default none (the API at `/v1/…`).
   *
   * @example
   * const gateway = createGateway({ ...options, basePath: '/api' });
   * app.all('/api/*', (c) => gateway.fetch(c.req.raw)); // Hono
   */
  basePath?: string;
  /** The model catalogue: each model-record field plus routing and settings. */
  models: ModelConfig[];
  /** App-only character prompts: a keyed chat whose first system message opens with one is refused. */
  characters?: string[];
  /**
   * The SHA-256 hex digest of a whole key, as the store keeps keys (default: Web Crypto's
   * `crypto.subtle.digest`, a thread-pool round trip on Node). A synchronous hasher saves that hop
   * on every request: `nodeHashKey` of `@tollgate/node` (node:crypto, also on Bun and Deno).
   */
  hashKey?: (key: string) => string | Promise<string>;
  /**
   * How long a verified key is trusted without asking the store (default 1000 ms; 0: every request
   * asks, as `store.findKey` on every request). A key revoked, or an account disabled, deleted or
   * re-planned, through the admin actions or admin API given this gateway (`gateway` option) takes
   * effect at its next request here; done anywhere else (another instance, the CLI, the store
   * directly) it takes effect within this long. Unknown keys are never cached. A non-negative whole
   * number of milliseconds (docs/architecture.md, Key cache).
   */
  keyCacheMs?: number;
  /** Admits the embedding app's own signed-in users (tokens that are not `sk_` keys). */
  authenticate?: (token: string, request: Request) => Promise<AppPrincipal | undefined>;
  /** Page fetch for `POST /v1/fetch`; without it the path is not served (plain-text 404). */
  pageFetcher?: PageFetcher;
  /** Micro-dollars per page fetch (default 0). */
  fetchMicrosPerCall?: number;
  /** Service-wide search + fetch requests a minute (503 upstream_busy past it); off by default. */
  sharedSearchFetchPerMinute?: number;
  /** Service-wide requests in flight (503 server_busy past it); off by default. */
  maxInFlight?: number;
  /** A limiter store failure refuses (`closed`, default: 503 service_unavailable) or admits (`open`). */
  onLimiterError?: 'closed' | 'open';
  /**
   * How long a dead instance's credit holds and in-flight leases linger (default 15 minutes). Not a
   * limit on a request's length: while the instance lives it renews every hold and lease of its
   * requests every third of this, however long they run (a store without `checkpoint` gets no hold
   * renewals: its holds expire this long after they were taken). Shorter frees a crashed instance's
   * credit sooner, at one more batched store write per third of it.
   */
  holdTtlMs?: number;
  /** A stream with no upstream event for this long fails with an error event (default 5 minutes). */
  streamIdleTimeoutMs?: number;
  /**
   * A stream whose client has taken none of the bytes waiting for it for this long is cut as a
   * client that left (default `streamIdleTimeoutMs`, 5 minutes): the upstream call is aborted, the
   * slot freed, the client's body ended, and the stream charged what it delivered. Until then
   * back-pressure keeps the upstream paused and the gateway buffers nothing more for it.
   */
  clientStallTimeoutMs?: number;
  /**
   * How long the upstream may take to answer: its response headers, and on a stream its first event
   * (default 5 minutes). Past it the upstream call is aborted and the request fails with
   * `upstream_error` (502, or the error event of a stream whose 200 was already sent), nothing charged.
   */
  upstreamHeadersTimeoutMs?: number;
  /**
   * How long a non-streamed reply's body may take after its headers (default 5 minutes). A
   * non-streamed call is bounded by both deadlines together (10 minutes by default), as the
   * providers read headers and body in one call; past it: 502 `upstream_error`, nothing charged.
   */
  upstreamBodyTimeoutMs?: number;
  /** Keepalive comment interval on streams (default 25 s). */
  keepaliveMs?: number;
  /** How long a tee provider's attestation stays trusted (default 5 minutes). */
  attestationTtlMs?: number;
  /** A tee provider's `attest` that has not passed after this long fails: 503 upstream_unattested (default 10 s). */
  attestationTimeoutMs?: number;
  /** The clock, unix milliseconds. */
  now?: () => number;
  /** Timers, for tests. */
  timers?: Timers;
  /** Receives one record per finished request. */
  log?: (record: RequestLog) => void;
  /**
   * Told when a settlement could not be written after retries: the hold then expires, charged
   * only what a stream had checkpointed (see its ledger entry, meta `{ outcome: 'checkpoint' }`).
   * Alert on it; the details name the request, account and amount so it can be charged by hand.
   */
  onSettleError?: (details: { requestId: string; accountId: string; micros: number; error: unknown }) => void;
  /**
   * Told of an error that escaped while serving a request (a store or limiter that throws, a bug):
   * the client gets the spec's 503 `service_unavailable` with nothing internal, and the request log
   * line carries the error's kind and `context.errorId`. A hook that throws is ignored.
   *
   * @example
   * onError: (error, context) => logger.error({ err: error, ...context }, 'request failed'),
   */
  onError?: (error: unknown, context: ErrorContext) => void;
  /**
   * Receives events for the operator's own systems (docs/events.md): `balance.low` and
   * `balance.negative` when a request's charge took its account's balance below `lowBalanceMicros`
   * or below zero, `key.budget_reached` when a key's budget refused a request. Called off the reply
   * path (the balance is read after the reply or stream ended, and only when this hook is set),
   * never awaited; a hook that throws is ignored. Best effort, at least once per crossing at best:
   * dedupe on the event's `id`. The admin actions emit `key.revoked` through their own `onEvent`.
   *
   * @example
   * onEvent: (event) => queue.push(event), // deliver elsewhere; never block here
   */
  onEvent?: EventHook;
  /**
   * The low-balance threshold of `balance.low`, micro-dollars (a positive whole number); unset, no
   * `balance.low` is emitted (`balance.negative` still is).
   */
  lowBalanceMicros?: number;
}

/** Who is calling: a key of an account, or the app's signed-in user. */
export interface Principal {
  account: Account;
  funding: Funding;
  /** The key id, for keyed requests. */
  keyId?: string;
  /** True for the embedding app's own users (who alone may use characters). */
  app: boolean;
}
