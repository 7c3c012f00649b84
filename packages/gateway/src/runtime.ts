import type { Timers } from '@tollgate/core';
import type { Store } from '@tollgate/billing';
import type { Attestations } from './call-routes';
import type { Checkpoints } from './checkpoints';
import type { CreditHold } from './credit-hold';
import type { GatewayOptions, Principal, RequestLog } from './gateway-options';
import type { ModelCatalogue } from './model-catalogue';
import type { Replies } from './reply';

/** What every handler shares, built once by createGateway. */
export interface Runtime {
  options: GatewayOptions;
  store: Store;
  catalogue: ModelCatalogue;
  replies: Replies;
  attestations: Attestations;
  obfuscate: () => string;
  isCharacter: (text: string) => boolean;
  now: () => number;
  timers: Timers;
  holdTtlMs: number;
  keepaliveMs: number;
  idleTimeoutMs: number;
  /** How long a stream's client may take none of the bytes waiting for it before the stream is cut. */
  clientStallTimeoutMs: number;
  /** Every live hold, renewed every third of `holdTtlMs` until settled or released; streams' delivered cost written once a tick (crash checkpoints). */
  checkpoints: Checkpoints;
  /** How long an upstream may take to answer (headers; on a stream, its first event). */
  headersTimeoutMs: number;
  /** How long a non-streamed reply's body may take after its headers (where the gateway sees them apart). */
  bodyTimeoutMs: number;
  /** A non-streamed call's whole deadline: the headers and body deadlines together. */
  wholeCallMs: number;
  /** Hands an error that must not go unseen to `onError` (never throws). */
  reportError(error: unknown, context: MeteredContext): void;
}

/** One metered request after admission: authenticated, within limits, holding an in-flight slot. */
export interface MeteredContext {
  request: Request;
  principal: Principal;
  /** Unix ms when the gateway got the request (the body deadline counts from here). */
  startedAt: number;
  /** The body, parsed strictly: always a JSON object (an empty one once admission parsed it). */
  body: Record<string, unknown>;
  /** The request log record, filled in as the request goes. */
  log: Partial<RequestLog>;
  /**
   * Frees the request's in-flight slot; later calls do nothing. The router calls it when a handler
   * answers without a stream; a stream calls it the moment it ends.
   */
  releaseSlot(): Promise<void>;
  /**
   * The holds the request took (admitMetered adds each). If the handler throws, the router releases
   * them: a hold neither settled nor released would otherwise be renewed for as long as the
   * process lives (checkpoints.ts renews every live hold).
   */
  holds: CreditHold[];
}

/** A streamed reply: the response, and a promise that resolves once the stream ended and was settled. */
export interface StreamedReply {
  response: Response;
  finished: Promise<void>;
}

/** What a handler answers: a whole reply (the router frees the slot), or a stream (which frees it itself). */
export type HandlerReply = Response | StreamedReply;

/** A metered endpoint's handler, after routing, admission by the limiter and the body read. */
export type Handler = (runtime: Runtime, context: MeteredContext) => Promise<HandlerReply>;
