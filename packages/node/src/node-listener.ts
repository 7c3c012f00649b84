import { IncomingMessage, type OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';

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
const kBody = Symbol('tollgate.body');

type WithExchange = ServerResponse & { [kExchange]?: Exchange };
type WithBody = IncomingMessage & { [kBody]?: IncomingBody };

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
class Exchange {
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
  flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** Destroys the connection of a client that took nothing for `stallTimeoutMs` (armed while waiting for `drain`). */
  stallTimer: ReturnType<typeof setTimeout> | undefined;
  wake: (() => void) | undefined;

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
    outgoing.writeHead(phase === 'request' ? 400 : 500, { 'content-type': 'text/plain; charset=utf-8', 'content-length': text.length });
    outgoing.end(text);
  }
}

/** Methods a web `Request` refuses (undici throws on them): a 400 here too. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** The `Request` of an incoming message: a {@link NodeRequest}, or a real `Request` where undici would not take one as its input. */
function newRequest(incoming: IncomingMessage, hostname: string | undefined, exchange: Exchange): Request {
  const method = incoming.method ?? 'GET';
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) throw new TypeError(`'${method}' HTTP method is unsupported.`);
  const request = lightRequest(new NodeRequest(exchange, method, requestUrl(incoming, hostname)));
  return nodeRequestsForward() ? request : materialise(request);
}

const kMaterialise = Symbol('tollgate.materialise');

/**
 * The runtime's `Request` (undici's) as this module found it: what NodeRequest extends and
 * materialises, whatever replaces the global later.
 */
const WebRequest = Request;

/**
 * The handler's `Request`, without undici's `Request` machinery on the hot path: `method`, `url`,
 * `headers` (built from `rawHeaders` on first use), `signal` (the exchange's own, no second signal
 * following it) and `body` (the pull-based stream, made on first use) are answered here. Any other
 * member (`text()`, `json()`, `clone()`, `cache`, …, and the internal slots undici reads when the
 * request is passed to `new Request()` or `fetch()`) makes a real `Request` once — same body
 * stream, same signal, the headers as they are then — and answers from it. Its prototype chain
 * reaches `Request.prototype`, so `instanceof Request` holds. Headers read before that moment stay
 * the ones `headers` returns; changes made to them afterwards do not reach the real `Request`.
 */
class NodeRequest {
  readonly #exchange: Exchange;
  readonly #method: string;
  readonly #url: string;
  #headers: Headers | undefined;
  /** The body stream this object made: `null` for GET and HEAD, `undefined` until first asked for. */
  #body: ReadableStream<Uint8Array> | null | undefined;
  /** The real `Request`, once a member only it answers was asked for. */
  #request: Request | undefined;
  /** The real `Request` carries {@link NodeRequest.#body} (not a stand-in for a body already used). */
  #shared = false;

  constructor(exchange: Exchange, method: string, url: string) {
    this.#exchange = exchange;
    this.#method = method;
    this.#url = url;
  }

  get method(): string {
    return this.#method;
  }

  get url(): string {
    return this.#url;
  }

  get headers(): Headers {
    if (this.#headers === undefined) {
      // Duplicates are appended, as a web Headers keeps them. A value Headers refuses (only a server
      // with insecureHTTPParser lets one through, a NUL) throws here, in the handler's phase.
      const headers = new Headers();
      appendRawHeaders(headers, this.#exchange.incoming.rawHeaders);
      this.#headers = headers;
    }
    return this.#headers;
  }

  get signal(): AbortSignal {
    return this.#exchange.abort.signal;
  }

  get body(): ReadableStream<Uint8Array> | null {
    const request = this.#request;
    // clone() on the real Request tees the stream and keeps one branch: from then on, that is the body.
    return request !== undefined && this.#shared ? request.body : this.#ownBody();
  }

  get bodyUsed(): boolean {
    const request = this.#request;
    if (request !== undefined && this.#shared) return request.bodyUsed;
    const body = this.#body;
    return body !== undefined && body !== null && isDisturbed(body);
  }

  #ownBody(): ReadableStream<Uint8Array> | null {
    if (this.#body === undefined) {
      if (this.#method === 'GET' || this.#method === 'HEAD') this.#body = null;
      else {
        const source = new IncomingBody(this.#exchange.incoming);
        this.#exchange.body = source;
        this.#body = new ReadableStream<Uint8Array>(source, { highWaterMark: 0 });
      }
    }
    return this.#body;
  }

  /** The real `Request`, made once. */
  [kMaterialise](): Request {
    if (this.#request !== undefined) return this.#request;
    const body = this.#ownBody();
    const init: RequestInit & { duplex?: 'half' } = { method: this.#method, signal: this.#exchange.abort.signal };
    if (this.#headers !== undefined) init.headers = this.#headers;
    // A body already read (or locked by a reader) cannot be given to a Request: a stand-in marked as
    // used makes the real Request refuse its body as undici's own would (`text()` rejects,
    // `new Request(it)` throws), while `body` and `bodyUsed` keep answering from the stream itself.
    const usable = body === null || !(body.locked || isDisturbed(body));
    if (body !== null) {
      init.body = usable ? body : new ReadableStream<Uint8Array>();
      init.duplex = 'half';
    }
    const request = new WebRequest(this.#url, init);
    if (!usable) request.arrayBuffer().catch(ignore);
    if (this.#headers === undefined) {
      appendRawHeaders(request.headers, this.#exchange.incoming.rawHeaders);
      this.#headers = request.headers;
    }
    this.#request = request;
    this.#shared = usable;
    return request;
  }
}

/**
 * The members of `Request.prototype` (and of the classes it extends, when the global `Request` was
 * already a subclass at load) NodeRequest does not answer itself, each answered by the real
 * `Request`; then the symbol-keyed slots undici's `Request` keeps its state in (undici 6: what
 * `new Request(input)` and `fetch(input)` read from an input that is `instanceof Request`).
 */
for (let prototype: object | null = WebRequest.prototype; prototype !== null && prototype !== Object.prototype; prototype = Object.getPrototypeOf(prototype)) {
  for (const name of Object.getOwnPropertyNames(prototype)) {
    if (name === 'constructor' || Object.hasOwn(NodeRequest.prototype, name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    const getter = descriptor?.get;
    const method: unknown = descriptor?.value;
    if (getter !== undefined) {
      Object.defineProperty(NodeRequest.prototype, name, {
        configurable: true,
        get(this: NodeRequest): unknown {
          return Reflect.apply(getter, this[kMaterialise](), []);
        },
      });
    } else if (typeof method === 'function') {
      Object.defineProperty(NodeRequest.prototype, name, {
        configurable: true,
        writable: true,
        value(this: NodeRequest, ...args: unknown[]): unknown {
          return Reflect.apply(method, this[kMaterialise](), args);
        },
      });
    }
  }
}
for (const slot of Object.getOwnPropertySymbols(new WebRequest('http://localhost/'))) {
  Object.defineProperty(NodeRequest.prototype, slot, {
    configurable: true,
    get(this: NodeRequest): unknown {
      return Reflect.get(this[kMaterialise](), slot);
    },
  });
}
Object.setPrototypeOf(NodeRequest.prototype, WebRequest.prototype);

/** The class whose prototype NodeRequest's prototype follows. */
let extended: typeof Request = WebRequest;

/**
 * A NodeRequest as the `Request` it is. A global `Request` replaced by a subclass of the runtime's
 * (as `serve()` of @hono/node-server does) is followed, so that `instanceof Request` holds with it too.
 */
function lightRequest(request: NodeRequest): Request {
  if (Request !== extended && Request.prototype instanceof WebRequest) {
    Object.setPrototypeOf(NodeRequest.prototype, Request.prototype);
    extended = Request;
  }
  if (request instanceof WebRequest) return request;
  throw new TypeError('NodeRequest does not extend Request.');
}

/** The real `Request` behind `request`, made on the spot if it is a NodeRequest. */
function materialise(request: Request): Request {
  return request instanceof NodeRequest ? request[kMaterialise]() : request;
}

let forwards: boolean | undefined;

/**
 * Whether this runtime's `Request` takes a NodeRequest as its input (`new Request(it)`, `fetch(it)`),
 * through the slots forwarded above. An undici that keeps its state in private fields (undici 7)
 * does not: there every request is materialised at once, as before NodeRequest.
 */
function nodeRequestsForward(): boolean {
  if (forwards === undefined) {
    try {
      const incoming = new IncomingMessage(new Socket());
      incoming.rawHeaders = ['x-probe', '1'];
      const exchange = new Exchange(incoming, new ServerResponse(incoming), undefined, undefined);
      const probe = new WebRequest(lightRequest(new NodeRequest(exchange, 'HEAD', 'http://localhost/probe')));
      forwards = probe.method === 'HEAD' && probe.url === 'http://localhost/probe' && probe.headers.get('x-probe') === '1';
    } catch {
      forwards = false;
    }
  }
  return forwards;
}

/** Whether a web stream was read from or cancelled: node:stream's `isDisturbed`, which takes web streams too (its types name only Node's). */
function isDisturbed(stream: ReadableStream<Uint8Array>): boolean {
  return Reflect.apply(Readable.isDisturbed, Readable, [stream]) === true;
}

function appendRawHeaders(headers: Headers, raw: string[]): void {
  for (let index = 0; index < raw.length; index += 2) headers.append(raw[index] as string, raw[index + 1] as string);
}

/** Host names and ports as they come, needing no URL parse to check. */
const PLAIN_HOST = /^[A-Za-z0-9._-]+(?::\d{1,5})?$/;

/** The absolute URL of the request: origin-form target on the Host header (or `hostname`), or an absolute-form target. */
function requestUrl(incoming: IncomingMessage, hostname: string | undefined): string {
  const target = incoming.url ?? '';
  if (target.charCodeAt(0) !== 47 /* / */) {
    if (target.startsWith('http://') || target.startsWith('https://')) {
      checkPath(target);
      const url = new URL(target);
      if (url.username !== '' || url.password !== '') throw new TypeError('The request target has credentials.');
      return url.href;
    }
    throw new TypeError('The request target is not a path.');
  }
  checkPath(target);
  const host = incoming.headers.host || hostname;
  if (!host) throw new TypeError('The request has no Host header.');
  if (!PLAIN_HOST.test(host)) {
    // Anything else must be a host (and port) alone: `a/b` or `a@b` would change the URL's meaning.
    const parsed = new URL(`http://${host}`);
    const bare = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d*$/, '');
    if (parsed.hostname !== bare.toLowerCase()) throw new TypeError('The Host header is not a host.');
  }
  // Parsed as `new Request(url)` would: the URL the handler sees is the normalised one.
  return new URL(`${(incoming.socket as { encrypted?: boolean } | null)?.encrypted ? 'https' : 'http'}://${host}${target}`).href;
}

/** A backslash in the path would be read as a slash by the URL parser: refused, as @hono/node-server does. */
function checkPath(target: string): void {
  const backslash = target.indexOf('\\');
  if (backslash === -1) return;
  const query = target.indexOf('?');
  if (query === -1 || backslash < query) throw new TypeError('The request path has a backslash.');
}

/**
 * The request body as a pull source: each pull takes what the incoming message buffered, or waits
 * for its next `readable`. Nothing is read before the first pull, and a handler that stops reading
 * leaves the socket paused (Node stops reading it when the message's buffer is full).
 */
class IncomingBody implements UnderlyingDefaultSource<Uint8Array> {
  controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** A pull is waiting for bytes. */
  waiting = false;
  listening = false;
  /** Closed, errored or cancelled. */
  settled = false;
  /** Read from or cancelled: Node no longer drains the rest on its own. */
  touched = false;

  constructor(readonly incoming: IncomingMessage) {}

  start(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.controller = controller;
  }

  pull(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.waiting = true;
    if (!this.listening) {
      const incoming = this.incoming as WithBody;
      if (incoming.readableEnded || incoming.destroyed) {
        // Gone (or read by someone else) before the handler read: nothing more will come.
        this.settled = true;
        if (incoming.readableEnded) controller.close();
        else controller.error(incoming.errored ?? cutShort());
        return;
      }
      this.listening = true;
      this.touched = true;
      incoming[kBody] = this;
      incoming.on('readable', onBodyReadable);
      incoming.on('end', onBodyEnd);
      incoming.on('error', onBodyError);
      incoming.on('close', onBodyClose);
    }
    this.take();
  }

  take(): void {
    const chunk = this.incoming.read() as Buffer | null;
    if (chunk === null) return;
    this.waiting = false;
    this.controller?.enqueue(chunk);
  }

  cancel(): void {
    this.touched = true;
    this.stop();
  }

  /** Ends the body with `error` for its reader (the client went away), unless it already ended. */
  error(error: unknown): void {
    if (this.settled) return;
    this.stop();
    this.controller?.error(error);
  }

  stop(): void {
    this.settled = true;
    this.waiting = false;
    if (!this.listening) return;
    const incoming = this.incoming;
    incoming.off('readable', onBodyReadable);
    incoming.off('end', onBodyEnd);
    incoming.off('error', onBodyError);
    incoming.off('close', onBodyClose);
  }
}

function onBodyReadable(this: WithBody): void {
  const body = this[kBody];
  if (body?.waiting) body.take();
}

function onBodyEnd(this: WithBody): void {
  const body = this[kBody];
  if (!body || body.settled) return;
  body.stop();
  body.controller?.close();
}

function onBodyError(this: WithBody, error: Error): void {
  this[kBody]?.error(error);
}

function onBodyClose(this: WithBody): void {
  this[kBody]?.error(this.errored ?? cutShort());
}

function cutShort(): TypeError {
  return new TypeError('The client closed the connection before the request body ended.');
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
  try {
    await send(exchange, response);
  } catch (error) {
    exchange.reader?.cancel(error).catch(ignore);
    if (isErrorReply) {
      if (!exchange.outgoing.headersSent && !exchange.outgoing.destroyed) exchange.fail(error, 'handler');
      else exchange.outgoing.destroy();
    } else exchange.fail(error, 'response');
  }
}

/** Writes `response` to the exchange's outgoing message. */
async function send(exchange: Exchange, response: Response): Promise<void> {
  const outgoing = exchange.outgoing;
  const status = response.status;
  const headers = outgoingHeaders(response.headers);
  const body = response.body;
  if (exchange.gone || outgoing.destroyed) {
    body?.cancel().catch(ignore);
    return;
  }
  if (body === null) {
    outgoing.writeHead(status, headers);
    outgoing.end();
    return;
  }
  exchange.status = status;
  exchange.headers = headers;
  const reader = body.getReader();
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
    if (!exchange.headWritten) {
      if (exchange.pending === undefined) exchange.pending = [value];
      else exchange.pending.push(value);
      exchange.pendingBytes += value.byteLength;
      if (exchange.pendingBytes > MAX_PENDING_BYTES) writeHead(exchange);
      continue;
    }
    write(exchange, value);
  }
  exchange.done = true;
  if (exchange.flushTimer !== undefined) clearTimeout(exchange.flushTimer);
  if (exchange.headWritten) {
    outgoing.end();
    return;
  }
  exchange.headWritten = true;
  exchange.sent = true;
  const pending = exchange.pending;
  if (headers['content-length'] === undefined) headers['content-length'] = exchange.pendingBytes;
  outgoing.writeHead(status, headers);
  if (pending === undefined) outgoing.end();
  else outgoing.end(pending.length === 1 ? pending[0] : Buffer.concat(pending, exchange.pendingBytes));
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
  return new Promise((resolve) => {
    exchange.wake = resolve;
    exchange.outgoing.once('drain', onOutgoingDrain);
    if (exchange.stallTimeoutMs !== undefined) {
      exchange.stallTimer = setTimeout(destroyStalled, exchange.stallTimeoutMs, exchange);
      exchange.stallTimer.unref?.();
    }
  });
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

/** The response closed: finished, or the client went away first (abort the signal, cancel the body). */
function onOutgoingClose(this: WithExchange): void {
  const exchange = this[kExchange];
  if (!exchange) return;
  this[kExchange] = undefined;
  if (exchange.flushTimer !== undefined) clearTimeout(exchange.flushTimer);
  if (exchange.stallTimer !== undefined) clearTimeout(exchange.stallTimer);
  if (!this.writableFinished) {
    exchange.gone = true;
    exchange.abort.abort(); // a DOMException AbortError
    exchange.reader?.cancel(exchange.abort.signal.reason).catch(ignore);
    exchange.body?.error(exchange.incoming.errored ?? cutShort());
    const wake = exchange.wake;
    exchange.wake = undefined;
    wake?.();
    return;
  }
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
