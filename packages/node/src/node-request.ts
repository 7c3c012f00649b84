import { concatBytes, LEAN_REPLY } from '@tollgate/core';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { kMaterialise, standInFor } from './stand-in';
import { leanResponse } from './lean-response';

/** What a {@link NodeRequest} needs of its exchange (the listener's `Exchange`). */
export interface RequestExchange {
  readonly incoming: IncomingMessage;
  readonly abort: AbortController;
  /** The request body's source, once the body stream was made. */
  body: IncomingBody | undefined;
}

const kBody = Symbol('tollgate.body');

type WithBody = IncomingMessage & { [kBody]?: IncomingBody };

/**
 * Methods a web `Request` refuses (undici throws on them). Such a request still reaches the handler
 * as a {@link NodeRequest} carrying its method, as Deno's and Bun's servers hand them on: a router
 * answers it as any method it does not serve (the gateway: 405 on a path it serves, else 404). Only
 * a member that needs the real `Request` fails, in the handler's phase.
 */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** The `Request` of an incoming message: a {@link NodeRequest}, or a real `Request` where undici would not take one as its input. */
export function newRequest(incoming: IncomingMessage, hostname: string | undefined, exchange: RequestExchange): Request {
  const method = incoming.method ?? 'GET';
  const request = lightRequest(new NodeRequest(exchange, method, requestUrl(incoming, hostname)));
  return nodeRequestsForward() || FORBIDDEN_METHODS.has(method.toUpperCase()) ? request : materialise(request);
}

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
  readonly #exchange: RequestExchange;
  readonly #method: string;
  readonly #url: string;
  #headers: Headers | undefined;
  /** The body stream this object made: `null` for GET and HEAD, `undefined` until first asked for. */
  #body: ReadableStream<Uint8Array> | null | undefined;
  /** The real `Request`, once a member only it answers was asked for. */
  #request: Request | undefined;
  /** The real `Request` carries {@link NodeRequest.#body} (not a stand-in for a body already used). */
  #shared = false;
  /** The body was (or is being) read whole straight from the incoming message, with no stream. */
  #read = false;

  constructor(exchange: RequestExchange, method: string, url: string) {
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
    if (this.#read) return true;
    const body = this.#body;
    return body !== undefined && body !== null && isDisturbed(body);
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#collect();
    if (bytes === undefined) return Reflect.apply(WebRequest.prototype.arrayBuffer, this[kMaterialise](), []) as Promise<ArrayBuffer>;
    return bytes.then(arrayBufferOf);
  }

  bytes(): Promise<Uint8Array> {
    const bytes = this.#collect();
    if (bytes === undefined) return Reflect.apply(WebRequest.prototype.bytes, this[kMaterialise](), []) as Promise<Uint8Array>;
    return bytes;
  }

  text(): Promise<string> {
    const bytes = this.#collect();
    if (bytes === undefined) return Reflect.apply(WebRequest.prototype.text, this[kMaterialise](), []) as Promise<string>;
    return bytes.then(decodeText);
  }

  json(): Promise<unknown> {
    const bytes = this.#collect();
    if (bytes === undefined) return Reflect.apply(WebRequest.prototype.json, this[kMaterialise](), []) as Promise<unknown>;
    return bytes.then(decodeJson);
  }

  /**
   * The whole body, read straight from the incoming message (no web stream, no real `Request`), when
   * nothing else has touched it yet: no `body` stream made, no real `Request`, not read before, not
   * a GET or HEAD. Otherwise `undefined`, and the real `Request` answers (and refuses a used body).
   */
  #collect(): Promise<Uint8Array> | undefined {
    if (this.#read || this.#body !== undefined || this.#request !== undefined) return undefined;
    if (this.#method === 'GET' || this.#method === 'HEAD') return undefined;
    this.#read = true;
    const source = new IncomingBody(this.#exchange.incoming);
    this.#exchange.body = source;
    return source.collect();
  }

  #ownBody(): ReadableStream<Uint8Array> | null {
    if (this.#body === undefined) {
      if (this.#method === 'GET' || this.#method === 'HEAD') this.#body = null;
      else if (this.#read) this.#body = usedStream();
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

// A runtime whose Request has no bytes() gets none here either.
if (typeof WebRequest.prototype.bytes !== 'function') Reflect.deleteProperty(NodeRequest.prototype, 'bytes');

const decoder = new TextDecoder();

/** As a Request's text(): UTF-8, a leading BOM dropped, bad bytes replaced. */
function decodeText(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}

/** The ArrayBuffer of bytes made by {@link IncomingBody.collect} (a fresh one, exactly its size). */
function arrayBufferOf(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
}

/** The `body` of a request read whole without a stream: a stream already read (disturbed) and locked, as a used Request's body is. */
function usedStream(): ReadableStream<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.close();
    },
  });
  stream.getReader().read().catch(ignore);
  return stream;
}

/** Before each request: follows a global `Request` replaced by a subclass later (packages/node/src/stand-in.ts). */
const followRequest = standInFor(NodeRequest, WebRequest, new WebRequest('http://localhost/'), () => Request);

// The listener writes a reply made from its parts (packages/node/src/lean-response.ts): the gateway
// builds its hot replies with this, with no Response, Headers or body stream (LEAN_REPLY of @tollgate/core).
Object.defineProperty(NodeRequest.prototype, LEAN_REPLY, { value: leanResponse });

/** A NodeRequest as the `Request` it is. */
function lightRequest(request: NodeRequest): Request {
  followRequest();
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
      const exchange: RequestExchange = { incoming, abort: new AbortController(), body: undefined };
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
 * leaves the socket paused (Node stops reading it when the message's buffer is full). Or, through
 * {@link IncomingBody.collect}, the whole body at once, with no stream.
 */
export class IncomingBody implements UnderlyingDefaultSource<Uint8Array> {
  controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  /** A pull is waiting for bytes. */
  waiting = false;
  listening = false;
  /** Closed, errored or cancelled. */
  settled = false;
  /** Read from or cancelled: Node no longer drains the rest on its own. */
  touched = false;
  /** Collecting the whole body ({@link IncomingBody.collect}): the chunks so far. */
  chunks: Buffer[] | undefined;
  resolve: ((bytes: Uint8Array) => void) | undefined;
  reject: ((error: unknown) => void) | undefined;

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

  /**
   * The whole body (what is left of it) as one fresh Uint8Array, read from the incoming message's
   * `data` events; rejects as a stream reader would when the message errors or the client goes.
   */
  collect(): Promise<Uint8Array> {
    return new Promise<Uint8Array>((resolve, reject) => {
      const incoming = this.incoming as WithBody;
      if (incoming.readableEnded || incoming.destroyed) {
        this.settled = true;
        if (incoming.readableEnded) resolve(new Uint8Array(0));
        else reject(incoming.errored ?? cutShort());
        return;
      }
      this.chunks = [];
      this.resolve = resolve;
      this.reject = reject;
      this.listening = true;
      this.touched = true;
      incoming[kBody] = this;
      incoming.on('data', onBodyData);
      incoming.on('end', onBodyEnd);
      incoming.on('error', onBodyError);
      incoming.on('close', onBodyClose);
      incoming.resume();
    });
  }

  /** The body ended: the stream closes, or the collected bytes are handed over. */
  end(): void {
    if (this.settled) return;
    this.stop();
    const chunks = this.chunks;
    if (chunks === undefined) {
      this.controller?.close();
      return;
    }
    const resolve = this.resolve;
    this.chunks = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    resolve?.(concatBytes(chunks));
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
    const reject = this.reject;
    if (reject === undefined) {
      this.controller?.error(error);
      return;
    }
    this.chunks = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    reject(error);
  }

  stop(): void {
    this.settled = true;
    this.waiting = false;
    if (!this.listening) return;
    const incoming = this.incoming;
    if (this.chunks === undefined) incoming.off('readable', onBodyReadable);
    else incoming.off('data', onBodyData);
    incoming.off('end', onBodyEnd);
    incoming.off('error', onBodyError);
    incoming.off('close', onBodyClose);
  }
}

function onBodyReadable(this: WithBody): void {
  const body = this[kBody];
  if (body?.waiting) body.take();
}

function onBodyData(this: WithBody, chunk: Buffer): void {
  const body = this[kBody];
  const chunks = body?.chunks;
  if (body === undefined || chunks === undefined) return;
  chunks.push(chunk);
}

function onBodyEnd(this: WithBody): void {
  this[kBody]?.end();
}

function onBodyError(this: WithBody, error: Error): void {
  this[kBody]?.error(error);
}

function onBodyClose(this: WithBody): void {
  this[kBody]?.error(this.errored ?? cutShort());
}

export function cutShort(): TypeError {
  return new TypeError('The client closed the connection before the request body ended.');
}

function ignore(): void {}
