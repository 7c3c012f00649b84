import type { Timers } from '@tollgate/core';
import type { Store } from '@tollgate/billing';
import type { Attestations } from './call-routes';
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
}

/** One metered request after admission: authenticated, within limits, holding an in-flight slot. */
export interface MeteredContext {
  request: Request;
  principal: Principal;
  /** Unix ms when the gateway got the request (the body deadline counts from here). */
  startedAt: number;
  /** The body, parsed strictly: always a JSON object. */
  body: Record<string, unknown>;
  /** The request log record, filled in as the request goes. */
  log: Partial<RequestLog>;
  /**
   * Hands the in-flight slot to a streamed body: the router then leaves it held. Call the returned
   * function once when the stream ends, with the settlement: the slot is freed at once, and the
   * request stays active until the settlement is done.
   */
  keepSlot(): (settlement: Promise<unknown>) => void;
}
