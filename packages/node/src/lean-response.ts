import type { LazyBody, LeanReply } from '@tollgate/core';
import { kMaterialise, standInFor } from './stand-in';
import { lightResponsesWork } from './upstream-response';

/** The runtime's `Response` (undici's) as this module found it. */
const WebResponse = Response;

/** What the listener writes of a lean reply: status, headers (lower-case names) and body. */
export interface LeanParts {
  status: number;
  headers: Record<string, string>;
  body: string | LazyBody;
}

const kParts = Symbol('tollgate.leanParts');

/**
 * A reply the gateway made from its parts for @tollgate/node's listener (`LeanReply` of
 * @tollgate/core, offered by the listener's requests): the listener writes the parts as they are,
 * so no `Response`, `Headers` or body `ReadableStream` is made. Anyone else who reads it gets a
 * `Response`: `status` and `ok` are answered here, every other member (`headers`, `body`, `text()`,
 * `clone()`, undici's internal slots) by the real `Response`, made once from the parts — from then
 * on the listener writes that one, with whatever was changed on it.
 */
class LeanResponse {
  readonly #status: number;
  readonly #headers: Record<string, string>;
  readonly #body: string | LazyBody;
  #response: Response | undefined;

  constructor(body: string | LazyBody, status: number, headers: Record<string, string>) {
    this.#body = body;
    this.#status = status;
    this.#headers = headers;
  }

  get status(): number {
    return this.#status;
  }

  get ok(): boolean {
    return this.#status >= 200 && this.#status <= 299;
  }

  /** The parts, while no real `Response` was made; else undefined. */
  [kParts](): LeanParts | undefined {
    if (this.#response !== undefined) return undefined;
    return { status: this.#status, headers: this.#headers, body: this.#body };
  }

  /** The real `Response`, made once. */
  [kMaterialise](): Response {
    const body = this.#body;
    this.#response ??= new WebResponse(typeof body === 'string' ? body : body.stream(), { status: this.#status, headers: this.#headers });
    return this.#response;
  }
}

/** Before each reply: follows a global `Response` replaced by a subclass later (packages/node/src/stand-in.ts). */
const followResponse = standInFor(LeanResponse, WebResponse, new WebResponse(null), () => Response);

/**
 * The listener's {@link LeanReply}: a {@link LeanResponse}, or a real `Response` where this
 * runtime's undici would not take a stand-in for its own (undici 7; see `lightResponsesWork`).
 */
export const leanResponse: LeanReply = (body, status, headers) => {
  if (!lightResponsesWork()) return new WebResponse(typeof body === 'string' ? body : body.stream(), { status, headers });
  followResponse();
  return new LeanResponse(body, status, headers) as unknown as Response;
};

/** The parts of a reply made by {@link leanResponse} that nobody turned into a real `Response`; else undefined. */
export function leanParts(response: Response): LeanParts | undefined {
  return response instanceof LeanResponse ? response[kParts]() : undefined;
}
