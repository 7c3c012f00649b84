import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { type BodySource, type ByteSink, bodySource, type LazyBody } from '@tollgate/core';
import { cutShort, type IncomingBody, newRequest } from './node-request';
import { leanParts } from './lean-response';

/** Where a failure happened, for {@link NodeListenerOptions.onError}. */
export type NodeListenerErrorPhase = 'request' | 'handler' | 'response';

/** Options of {@link createNodeListener}. */
export interface NodeListenerOptions {
  /** Host name of the request URL when a request has no Host header (HTTP/1.0); without it such a request is a 400. */
  hostname?: string;
  /**
   * Told of every failure: `'request'`, an incoming message that cannot be a web `Request` (a
   * target such as `*`, a backslash in the path, a bad Host, no Host and no `hostname`, a method
   * such as TRACE), answered 400 `Bad Request`; `'handler'`, a `fetch` that threw or rejected,
   * answered 500 `Internal Server Error` (plain text, nothing internal); `'response'`, a response
   * body that failed, answered 500 if nothing was sent yet, else the connection is cut. For
   * `'request'` and `'handler'` a `Response` returned here is sent instead of the default reply.
   */
  onError?: (error: unknown, phase: NodeListenerErrorPhase) => Response | undefined;
  /**
   * A client that takes none of the bytes waiting for it for this long (the socket stays full) has
   * its connection destroyed, which cancels the response's body. Without it (the default) such a
   * connection stays open until the client goes. A handler with a stall rule of its own (the
   * gateway's `clientStallTimeoutMs`, which ends the stream and frees its slot) wants this a little
   * longer, so that its rule acts first and this one only closes the connection afterwards.
   */
  stallTimeoutMs?: number;
}

/** A `fetch` handler on web standards, as `createGateway(…).fetch` is. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** After this long without a first body chunk, a streamed response's status and headers go out alone. */
const FLUSH_HEAD_MS = 10;
/** Bytes held back before the head is written, while the response's length may still be known. */
const MAX_PENDING_BYTES = 64 * 1024;
/** A request body left half read when the response ended is drained for this long, up to this many bytes, then the connection is cut. */
const DRAIN_MS = 500;
const MAX_DRAIN_BYTES = 64 * 1024 * 1024;

const kExchange = Symbol('tollgate.exchange');

type WithExchange = ServerResponse & { [kExchange]?: Exchange };
type IncomingWithExchange = IncomingMessage & { [kExchange]?: Exchange };

/**
 * A `request` listener for `http.createServer` that serves a web `fetch` handler: one lightweight
 * `Request` per incoming message (absolute URL, headers from `rawHeaders`, a pull-based body, a
 * `signal` aborted when the client goes away before the response finished; a real `Request` is made
 * only for the members that need one) and the `Response` written back
 * with back-pressure — status and headers in one `writeHead`, a body whose length is known at once
 * in one `end(bytes)` (head and body in one socket write), a streamed body chunk by chunk with the
 * chunks that are ready in the same tick in one write, the first with the head.
 *
 * @example
 * const server = createServer(createNodeListener(gateway.fetch, { hostname: '127.0.0.1' }));
 * server.listen(8080, '127.0.0.1');
 */
export function createNodeListener(fetch: FetchHandler, options: NodeListenerOptions = {}): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  const hostname = options.hostname;
  const onError = options.onError;
  const stallTimeoutMs = options.stallTimeoutMs;
  return (incoming, outgoing) => {
    const exchange = new Exchange(incoming, outgoing, onError, stallTimeoutMs);
    (outgoing as WithExchange)[kExchange] = exchange;
    outgoing.on('close', onOutgoingClose);
    (incoming as IncomingWithExchange)[kExchange] = exchange;
    incoming.on('close', onIncomingClose);
    let request: Request;
    try {
      request = newRequest(incoming, hostname, exchange);
    } catch (error) {
      exchange.fail(error, 'request');
      return;
    }
    let result: Response | Promise<Response>;
    try {
      result = fetch(request);
    } catch (error) {
      exchange.fail(error, 'handler');
      return;
    }
    void respond(exchange, result);
  };
}

/** One request and its response: the state the shared listeners find through the response. */
class Exchange implements ByteSink {
  readonly abort = new AbortController();
  body: IncomingBody | undefined;
  reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  status = 200;
  headers: OutgoingHttpHeaders | undefined;
  /** Chunks read before the head was written (their total length may become Content-Length). */
  pending: Uint8Array[] | undefined;
  pendingBytes = 0;
  /** `writeHead` was called. */
  headWritten = false;
  /** Bytes (or the flushed head) went to the socket. */
  sent = false;
  /** The body was read to its end. */
  done = false;
  /** The client went away before the response finished. */
  gone = false;
  /** {@link clientGone} ran: the client's leaving was handled (once). */
  left = false;
  flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** Destroys the connection of a client that took nothing for `stallTimeoutMs` (armed while waiting for `drain`). */
  stallTimer: ReturnType<typeof setTimeout> | undefined;
  wake: (() => void) | undefined;
  /** The body's source, when it writes its bytes here (BODY_SOURCE of @tollgate/core) instead of being read. */
  source: BodySource | undefined;
  /** This response replaces a failed one (`onError`'s): a failure of its body is the handler's. */
  errorReply = false;
  #resume: (() => void) | undefined;

  constructor(
    readonly incoming: IncomingMessage,
    readonly outgoing: ServerResponse,
    readonly onError: NodeListenerOptions['onError'],
    readonly stallTimeoutMs: number | undefined,
  ) {}

  /** Reports `error` and answers what can still be answered. */
  fail(error: unknown, phase: NodeListenerErrorPhase): void {
    let replacement: Response | undefined;
    try {
      replacement = this.onError?.(error, phase);
    } catch {
      replacement = undefined;
    }
    const outgoing = this.outgoing;
    this.done = true; // no head is written for the failed response now
    if (this.gone || outgoing.destroyed) return;
    if (outgoing.headersSent) {
      outgoing.destroy();
      return;
    }
    if (replacement instanceof Response && phase !== 'response') {
      void respond(this, replacement, true);
      return;
    }
    // A head node:http refused part-way leaves the headers it had set: none of them goes out.
    for (const name of outgoing.getHeaderNames()) outgoing.removeHeader(name);
    const text = phase === 'request' ? 'Bad Request' : 'Internal Server Error';
    // The reason phrase given: a head node:http refused has already set its own ('OK').
    outgoing.writeHead(phase === 'request' ? 400 : 500, text, { 'content-type': 'text/plain; charset=utf-8', 'content-length': text.length });
    outgoing.end(text);
  }

  /** {@link ByteSink}: one chunk of a body source; false while the socket is full (the source waits for `resume`, on `drain`). */
  write(chunk: Uint8Array): boolean {
    if (this.gone || this.done) return false;
    try {
      take(this, chunk);
    } catch (error) {
      this.error(error);
      return false;
    }
    if (!this.outgoing.writableNeedDrain) return true;
    // A source may write again before `drain` (the gateway's keepalive): one wait, one stall timer.
    if (this.wake === undefined) {
      const source = this.source;
      this.#resume ??= () => source?.resume();
      awaitDrain(this, this.#resume);
    }
    return false;
  }

  /**
   * Lets go of the body source (and of the wait for `drain` that would resume it), once: the
   * exchange may outlive the response (until the connection's next request). Returns it.
   */
  releaseSource(): BodySource | undefined {
    const source = this.source;
    if (source === undefined) return undefined;
    this.source = undefined;
    this.wake = undefined;
    this.#resume = undefined;
    return source;
  }

  /** {@link ByteSink}: the body source ended. */
  end(): void {
    if (this.gone || this.done) return;
    this.releaseSource();
    try {
      endBody(this);
    } catch (error) {
      // endBody marked the body done before its head was refused: the failure still answers.
      this.done = false;
      this.error(error);
    }
  }

  /** {@link ByteSink}: the body source failed (or a write of its bytes did). */
  error(reason: unknown): void {
    if (this.gone || this.done) return;
    cancelSource(this, reason);
    bodyFailed(this, reason);
  }
}

/** Cancels the exchange's body source, once (a failure cancels it, then the connection it cut closes). */
function cancelSource(exchange: Exchange, reason: unknown): void {
  exchange.releaseSource()?.cancel(reason);
}

/** A response body that failed: answered 500 if nothing went out yet, else the connection is cut (see `onError`). */
function bodyFailed(exchange: Exchange, error: unknown): void {
  const outgoing = exchange.outgoing;
  if (!exchange.errorReply) exchange.fail(error, 'response');
  else if (!outgoing.headersSent && !outgoing.destroyed) exchange.fail(error, 'handler');
  else outgoing.destroy();
}

/** Waits for the handler's response and writes it; never rejects. */
async function respond(exchange: Exchange, result: Response | Promise<Response>, isErrorReply = false): Promise<void> {
  let response: Response;
  try {
    response = await result;
  } catch (error) {
    exchange.fail(error, 'handler');
    return;
  }
  exchange.errorReply = isErrorReply;
  try {
    await send(exchange, response);
  } catch (error) {
    exchange.reader?.cancel(error).catch(ignore);
    cancelSource(exchange, error);
    bodyFailed(exchange, error);
  }
}

/** Writes `response` to the exchange's outgoing message. */
function send(exchange: Exchange, response: Response): Promise<void> {
  const lean = leanParts(response);
  if (lean !== undefined) return sendParts(exchange, lean.status, lean.headers, lean.body);
  const body = response.body;
  return sendParts(exchange, response.status, outgoingHeaders(response.headers), body === null ? null : (sourceOf(response, body) ?? lazyOf(body)));
}

/** A body stream as a {@link LazyBody}: its source if it offers one (BODY_SOURCE of @tollgate/core), else itself to read. */
function lazyOf(body: ReadableStream<Uint8Array>): LazyBody {
  return { stream: () => body, source: () => bodySource(body) };
}

/**
 * Writes a reply: no body, the string or bytes it was made from (with its head, in one write), a
 * body that writes itself to the exchange (its source), or a body stream read here.
 */
async function sendParts(exchange: Exchange, status: number, headers: OutgoingHttpHeaders, body: string | Uint8Array | LazyBody | null): Promise<void> {
  const outgoing = exchange.outgoing;
  if (exchange.gone || outgoing.destroyed) {
    if (body !== null && typeof body === 'object' && !(body instanceof Uint8Array)) {
      const source = body.source();
      if (source !== undefined) source.cancel();
      else body.stream().cancel().catch(ignore);
    }
    return;
  }
  if (body === null) {
    outgoing.writeHead(status, headers);
    outgoing.end();
    return;
  }
  if (typeof body === 'string' || body instanceof Uint8Array) {
    // The bytes the Response was made from, written as they are: no reader, no reads.
    exchange.done = true;
    exchange.headWritten = true;
    exchange.sent = true;
    if (headers['content-length'] === undefined) headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    outgoing.writeHead(status, headers);
    outgoing.end(body);
    return;
  }
  exchange.status = status;
  exchange.headers = headers;
  const pushed = body.source();
  if (pushed !== undefined) {
    // The body writes its bytes here as they come (`write`, `end`, `error`): no reads, no promise per chunk.
    exchange.source = pushed;
    process.nextTick(writeHeadOrFail, exchange);
    pushed.start(exchange);
    return;
  }
  const reader = body.stream().getReader();
  exchange.reader = reader;
  // Everything the body gives before this tick ends is held: if it ends too, the reply has a
  // Content-Length and goes out in one write; otherwise the head goes with the first chunk.
  process.nextTick(writeHeadOrFail, exchange);
  for (;;) {
    if (outgoing.writableNeedDrain) {
      await drained(exchange);
      if (exchange.gone) return;
    }
    const { done, value } = await reader.read();
    if (exchange.gone) return;
    if (done) break;
    take(exchange, value);
  }
  endBody(exchange);
}

/** The body ended: the response ends, in one write with its head and a Content-Length when the head is not out yet. */
function endBody(exchange: Exchange): void {
  const outgoing = exchange.outgoing;
  exchange.done = true;
  if (exchange.flushTimer !== undefined) clearTimeout(exchange.flushTimer);
  if (exchange.headWritten) {
    outgoing.end();
    return;
  }
  exchange.headWritten = true;
  exchange.sent = true;
  const pending = exchange.pending;
  const headers = exchange.headers ?? {};
  if (headers['content-length'] === undefined) headers['content-length'] = exchange.pendingBytes;
  outgoing.writeHead(exchange.status, headers);
  if (pending === undefined) outgoing.end();
  else outgoing.end(pending.length === 1 ? pending[0] : Buffer.concat(pending, exchange.pendingBytes));
}

/** The runtime's `Response` (undici's) as this module found it. */
const WebResponse = Response;

/** The state slot of undici's `Response` whose `body` holds the stream and the `source` it was made from; `null` where there is none. */
let stateSlot: symbol | null | undefined;

/**
 * The slot of `ResponseClass`'s instances that holds `{ body: { stream, source } }`, as undici 6's
 * `Response` keeps it: found once on a probe response, checked to hold that response's own body
 * stream and the string it was made from. An undici that keeps its state elsewhere (private
 * fields) has none: every response body is then read through its stream.
 */
export function probeSourceSlot(ResponseClass: typeof Response): symbol | null {
  try {
    const probe = new ResponseClass('probe');
    const stream = probe.body;
    for (const slot of Object.getOwnPropertySymbols(probe)) {
      const body = (Reflect.get(probe, slot) as { body?: { stream?: unknown; source?: unknown } } | null | undefined)?.body;
      if (body?.source === 'probe' && stream !== null && body.stream === stream) return slot;
    }
  } catch {
    // No slot: the stream path.
  }
  return null;
}

/**
 * The string or bytes a response of the runtime's own `Response` class was made from, when its
 * body stream is that source's, untouched: nobody read it, locked it or cancelled it. Undefined
 * otherwise (a stream body, a Blob, a body read elsewhere, a subclass, no state slot): the stream
 * is read. The body stays unread: whoever holds the response may still read it.
 */
function sourceOf(response: Response, body: ReadableStream<Uint8Array>): string | Uint8Array | undefined {
  if (Object.getPrototypeOf(response) !== WebResponse.prototype) return undefined;
  if (stateSlot === undefined) stateSlot = probeSourceSlot(WebResponse);
  if (stateSlot === null) return undefined;
  const state = (response as unknown as Record<symbol, { body?: { stream?: unknown; source?: unknown; length?: unknown } | null } | undefined>)[stateSlot];
  const held = state?.body;
  if (held === undefined || held === null || held.stream !== body || body.locked || Readable.isDisturbed(body as unknown as Readable)) return undefined;
  const source = held.source;
  if (typeof source === 'string') return source;
  // Bytes are handed to the first read of the original stream, which takes their buffer: after a
  // clone was read (the tee pulled the original stream), the source is detached, and only `body`
  // (the kept tee branch) still holds the bytes. Written from the source only while it is whole.
  return source instanceof Uint8Array && source.byteLength === held.length ? source : undefined;
}

/**
 * {@link writeHead} off the tick, where no caller catches: a head node:http refuses (a header value
 * a web `Headers` takes but Node does not, such as a control character) or a held chunk that is
 * not bytes fails the response instead of the process, and stops its body.
 */
function writeHeadOrFail(exchange: Exchange): void {
  try {
    writeHead(exchange);
  } catch (error) {
    exchange.fail(error, 'response');
    exchange.gone = true;
    exchange.reader?.cancel(error).catch(ignore);
    cancelSource(exchange, error);
  }
}

/** Writes the head (once), with the chunks held so far; with none, the head alone goes out after {@link FLUSH_HEAD_MS}. */
function writeHead(exchange: Exchange): void {
  if (exchange.headWritten || exchange.done || exchange.gone) return;
  const outgoing = exchange.outgoing;
  if (outgoing.destroyed || outgoing.headersSent) return;
  exchange.headWritten = true;
  outgoing.writeHead(exchange.status, exchange.headers);
  const pending = exchange.pending;
  exchange.pending = undefined;
  if (pending === undefined) {
    exchange.flushTimer = setTimeout(flushHead, FLUSH_HEAD_MS, exchange);
    return;
  }
  for (const chunk of pending) write(exchange, chunk);
}

function flushHead(exchange: Exchange): void {
  exchange.flushTimer = undefined;
  if (exchange.sent || exchange.done || exchange.gone || !exchange.outgoing.writable) return;
  exchange.sent = true;
  exchange.outgoing.flushHeaders();
}

/** One chunk of the body: held while the head is not out (which goes out once they pass {@link MAX_PENDING_BYTES}), else written. */
function take(exchange: Exchange, chunk: Uint8Array): void {
  if (exchange.headWritten) {
    write(exchange, chunk);
    return;
  }
  if (exchange.pending === undefined) exchange.pending = [chunk];
  else exchange.pending.push(chunk);
  exchange.pendingBytes += chunk.byteLength;
  if (exchange.pendingBytes > MAX_PENDING_BYTES) writeHead(exchange);
}

/** Writes one chunk, corked until the end of the tick so the chunks ready together go out in one write. */
function write(exchange: Exchange, chunk: Uint8Array): void {
  const outgoing = exchange.outgoing;
  if (!exchange.sent) {
    exchange.sent = true;
    if (exchange.flushTimer !== undefined) {
      clearTimeout(exchange.flushTimer);
      exchange.flushTimer = undefined;
    }
  }
  if (outgoing.writableCorked === 0) {
    outgoing.cork();
    process.nextTick(uncork, outgoing);
  }
  outgoing.write(chunk);
}

function uncork(outgoing: ServerResponse): void {
  if (outgoing.writableCorked > 0) outgoing.uncork();
}

/** Resolves on `drain`, or when the client goes away. */
function drained(exchange: Exchange): Promise<void> {
  return new Promise((resolve) => awaitDrain(exchange, resolve));
}

/** Calls `wake` on `drain`, or when the client goes away; a client that takes nothing for `stallTimeoutMs` is cut. */
function awaitDrain(exchange: Exchange, wake: () => void): void {
  exchange.wake = wake;
  exchange.outgoing.once('drain', onOutgoingDrain);
  if (exchange.stallTimeoutMs !== undefined) {
    exchange.stallTimer = setTimeout(destroyStalled, exchange.stallTimeoutMs, exchange);
    exchange.stallTimer.unref?.();
  }
}

function onOutgoingDrain(this: WithExchange): void {
  const exchange = this[kExchange];
  if (!exchange) return;
  if (exchange.stallTimer !== undefined) clearTimeout(exchange.stallTimer);
  exchange.stallTimer = undefined;
  const wake = exchange.wake;
  exchange.wake = undefined;
  wake?.();
}

/** The client took nothing for `stallTimeoutMs`: close its connection ('close' then cancels the body). */
function destroyStalled(exchange: Exchange): void {
  exchange.stallTimer = undefined;
  exchange.outgoing.destroy();
}

/**
 * The request closed. With its connection gone while its response is not finished, the client left:
 * a response queued behind a pipelined one never gets a `close` of its own (Node destroys only the
 * request), so this is where such a client's leaving is seen.
 */
function onIncomingClose(this: IncomingWithExchange): void {
  const exchange = this[kExchange];
  this[kExchange] = undefined;
  const socket = this.socket;
  if (!exchange || exchange.outgoing.writableFinished || (socket !== null && !socket.destroyed)) return;
  clientGone(exchange);
}

/** The client went away before the response finished: abort the signal, cancel the body, once. */
function clientGone(exchange: Exchange): void {
  if (exchange.left) return;
  exchange.left = true;
  clearTimers(exchange);
  exchange.gone = true;
  exchange.abort.abort(); // a DOMException AbortError
  exchange.reader?.cancel(exchange.abort.signal.reason).catch(ignore);
  cancelSource(exchange, exchange.abort.signal.reason);
  exchange.body?.error(exchange.incoming.errored ?? cutShort());
  const wake = exchange.wake;
  exchange.wake = undefined;
  wake?.();
}

/** The head's flush and the stall watch end with the response. */
function clearTimers(exchange: Exchange): void {
  if (exchange.flushTimer !== undefined) clearTimeout(exchange.flushTimer);
  if (exchange.stallTimer !== undefined) clearTimeout(exchange.stallTimer);
}

/** The response closed: finished, or the client went away first (abort the signal, cancel the body). */
function onOutgoingClose(this: WithExchange): void {
  const exchange = this[kExchange];
  if (!exchange) return;
  this[kExchange] = undefined;
  if (!this.writableFinished) {
    clientGone(exchange);
    return;
  }
  clearTimers(exchange);
  const body = exchange.body;
  if (body?.touched && !exchange.incoming.readableEnded) {
    body.stop();
    drainIncoming(exchange.incoming);
  }
}

/**
 * A request body read in part (or cancelled) when its response finished: Node drains only bodies
 * nobody read, so the rest is read and dropped here for the next request on the connection, within
 * bounds — past them the connection is cut.
 */
function drainIncoming(incoming: IncomingMessage): void {
  let bytes = 0;
  const cut = () => {
    incoming.off('data', count);
    incoming.socket?.destroy();
  };
  const count = (chunk: Buffer) => {
    bytes += chunk.byteLength;
    if (bytes > MAX_DRAIN_BYTES) cut();
  };
  const timer = setTimeout(cut, DRAIN_MS);
  timer.unref();
  incoming.on('data', count);
  incoming.once('end', () => {
    clearTimeout(timer);
    incoming.off('data', count);
  });
  incoming.on('error', ignore);
  incoming.resume();
}

/** Response headers as one object for `writeHead`; several Set-Cookie stay several. */
function outgoingHeaders(headers: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of headers) {
    if (name === 'set-cookie') {
      const cookies = out['set-cookie'];
      if (Array.isArray(cookies)) cookies.push(value);
      else out['set-cookie'] = [value];
    } else out[name] = value;
  }
  return out;
}

function ignore(): void {}
