/**
 * Where a {@link BodySource} writes a body's bytes: a runtime's own response writer (@tollgate/node's
 * listener writes them to the socket as they come).
 */
export interface ByteSink {
  /** One chunk of the body; answers false when the sink wants no more until the source's `resume`. */
  write(chunk: Uint8Array): boolean;
  /** The body ended. */
  end(): void;
  /** The body failed (as its stream would error). */
  error(reason: unknown): void;
}

/**
 * A body that writes its bytes into a {@link ByteSink} as they come, with no stream reads between
 * (no promise per chunk): what a metered stream offers a runtime adapter that can take it.
 */
export interface BodySource {
  /** Starts writing into `sink`; called once. */
  start(sink: ByteSink): void;
  /** The sink takes bytes again, after a `write` answered false. */
  resume(): void;
  /** The consumer went away: as cancelling the body's stream. */
  cancel(reason?: unknown): void;
}

/**
 * The key under which a body's `ReadableStream` may offer a {@link BodySource} of the same bytes: a
 * method that returns it once (the stream is not to be read from then on), or `undefined` when the
 * stream can only be read (already read, locked, or the source handed out). The gateway's metered
 * streams have it (packages/gateway/src/metered-stream.ts); @tollgate/node's listener takes it
 * (packages/node/src/node-listener.ts). A registered symbol, so every copy of this package agrees.
 */
export const BODY_SOURCE: unique symbol = Symbol.for('tollgate.body-source');

type WithBodySource = { [BODY_SOURCE]?: () => BodySource | undefined };

/**
 * The {@link BodySource} `body` offers under {@link BODY_SOURCE}, taken (the stream is not to be
 * read from then on), or `undefined`: read the stream.
 *
 * @example
 * const source = bodySource(response.body);
 * if (source) source.start({ write: (chunk) => socket.write(chunk), end: () => socket.end(), error: () => socket.destroy() });
 */
export function bodySource(body: ReadableStream<Uint8Array>): BodySource | undefined {
  return (body as WithBodySource)[BODY_SOURCE]?.();
}

/**
 * A body that makes its `ReadableStream` only when someone asks for it, and until then may hand
 * its bytes to a {@link ByteSink} instead: what a metered stream gives a {@link LeanReply}.
 */
export interface LazyBody {
  /** The body's stream, made on the first call (the same one after). */
  stream(): ReadableStream<Uint8Array>;
  /** Its {@link BodySource}, once, while nobody read the stream; else undefined: read `stream()`. */
  source(): BodySource | undefined;
}

/**
 * Makes the `Response` of a reply from its parts, for a server that writes such a reply itself
 * without reading a web body stream (and makes none: on Node 20 a `ReadableStream` costs some
 * 6 µs to construct, a `Response` of a string as much). The object answers as a `Response` does
 * for whoever else reads it (it makes the real one then). Headers are lower-case names.
 */
export type LeanReply = (body: string | LazyBody, status: number, headers: Record<string, string>) => Response;

/**
 * The key under which a request offers a {@link LeanReply}: @tollgate/node's listener puts one on
 * every request it makes (packages/node/src/node-request.ts), and the gateway builds its hot
 * replies with it (packages/gateway/src/reply.ts). A request without it gets a plain `Response`.
 */
export const LEAN_REPLY: unique symbol = Symbol.for('tollgate.lean-reply');

/**
 * The {@link LeanReply} `request` offers, or undefined: make a plain `Response`.
 *
 * @example
 * const lean = leanReply(request);
 * return lean ? lean(text, 200, headers) : new Response(text, { status: 200, headers });
 */
export function leanReply(request: Request): LeanReply | undefined {
  const lean = (request as { [LEAN_REPLY]?: unknown })[LEAN_REPLY];
  return typeof lean === 'function' ? (lean as LeanReply) : undefined;
}
