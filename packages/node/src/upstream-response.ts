import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { decodedBody } from './decoded-body';
import { BODY_READER, type BodyReader, type BodyReadResult, readWhenReadable } from '@tollgate/core';
import { kMaterialise, standInFor } from './stand-in';

/**
 * The body of one upstream reply, read off its (decoded) IncomingMessage either as a pull-based web
 * byte stream ({@link ReplyBody.stream}) or at once into one Buffer ({@link ReplyBody.readAll}).
 * Listening starts with the reply, so that an abort, a socket error or a cut is seen whichever way
 * (if any) the body is read later.
 */
export class ReplyBody {
  readonly source: Readable;
  /** The source emitted its end. */
  ended = false;
  /** Ended, failed or cancelled: the abort listener is gone. */
  over = false;
  failed = false;
  failure: unknown;
  controller: ReadableByteStreamController | undefined;
  wake: (() => void) | undefined;

  constructor(
    readonly message: IncomingMessage,
    readonly onOver: () => void,
  ) {
    const source = decodedBody(message);
    this.source = source;
    (source as WithReply)[kReply] = this;
    source.on('readable', onSourceReadable);
    source.on('end', onSourceEnd);
    source.on('error', onSourceError);
    source.on('close', onSourceClose);
  }

  finish(): boolean {
    if (this.over) return false;
    this.over = true;
    this.onOver();
    return true;
  }

  /** Fails the body at once (abort, socket error, cut) and destroys the connection. */
  fail(error: unknown): void {
    if (!this.finish()) return;
    this.failed = true;
    this.failure = error;
    this.source.destroy();
    this.message.destroy();
    this.controller?.error(error);
    this.wakeUp();
  }

  wakeUp(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /**
   * The body as a pull-based web byte stream: each pull takes what the socket has buffered
   * (`read()`), so nothing is read ahead of the consumer beyond node's own stream buffer. Cancel
   * destroys the connection (or, when every byte already arrived, reads out the rest so that the
   * connection goes back to the pool).
   */
  stream(): ReadableStream<Uint8Array> {
    const reader = new ReplyReader(this);
    return new ReadableStream(
      {
        type: 'bytes',
        start: (c) => {
          this.controller = c;
          if (this.failed) c.error(this.failure);
        },
        pull: async (c) => {
          // A failure rejects the read, and has errored the stream already (`fail`).
          const read = await reader.read();
          // A copy: a byte stream takes over the chunk's ArrayBuffer, which node shares between chunks.
          if (!read.done) c.enqueue(new Uint8Array(read.value));
          else if (this.ended) c.close();
        },
        cancel: () => this.cancel(),
      },
      { highWaterMark: 0 },
    );
  }

  /** Lets the rest of the body go: destroys the connection, or reads out a reply that already came whole so that its connection goes back to the pool. */
  cancel(): void {
    this.finish();
    const message = this.message;
    if (message.complete && this.source === message) {
      while (message.read() !== null);
      return;
    }
    this.source.destroy();
    message.destroy();
  }

  /** The body's chunks with no web stream (see {@link ReplyReader}). */
  reader(): BodyReader {
    return new ReplyReader(this);
  }

  /** Every byte of the body in one Buffer (node's own when it came in one chunk), with no web stream between. */
  readAll(): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const step = () => {
        if (this.failed) return reject(this.failure);
        const source = this.source;
        for (let chunk: Buffer | null = source.read(); chunk !== null; chunk = source.read()) {
          chunks.push(chunk);
          size += chunk.byteLength;
        }
        if (this.ended) {
          this.finish();
          return resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
        }
        if (this.over) return reject(this.failure); // cancelled: cannot happen for a body read here
        this.wake = step;
      };
      step();
    });
  }
}

/**
 * A reader of a reply's chunks straight off its (decoded) message: each read takes what the socket
 * has buffered, node's own Buffer (nothing reads ahead of the caller beyond node's stream buffer);
 * rejects as the body stream would (cut, abort); after a cancel every read is done.
 */
class ReplyReader implements BodyReader {
  #cancelled = false;
  constructor(readonly reply: ReplyBody) {}

  read(): Promise<BodyReadResult> {
    return readWhenReadable(this);
  }

  readNow(): BodyReadResult | null {
    if (this.#cancelled) return DONE;
    const reply = this.reply;
    if (reply.failed) throw reply.failure;
    const chunk: Buffer | null = reply.source.read();
    if (chunk !== null) return { done: false, value: chunk };
    if (reply.ended) {
      reply.finish();
      return DONE;
    }
    if (reply.over) return DONE;
    return null;
  }

  whenReadable(wake: () => void): void {
    this.reply.wake = wake;
  }

  cancel(): Promise<void> {
    if (!this.#cancelled) {
      this.#cancelled = true;
      if (!this.reply.over) this.reply.cancel();
      this.reply.wakeUp();
    }
    return Promise.resolve();
  }
}

const DONE: BodyReadResult = Object.freeze({ done: true, value: undefined });

const kReply = Symbol('tollgate.reply');
type WithReply = Readable & { [kReply]?: ReplyBody };

function onSourceReadable(this: WithReply): void {
  this[kReply]?.wakeUp();
}

function onSourceEnd(this: WithReply): void {
  const reply = this[kReply];
  if (!reply) return;
  reply.ended = true;
  reply.wakeUp();
}

function onSourceError(this: WithReply, error: Error): void {
  this[kReply]?.fail(new TypeError('terminated', { cause: error }));
}

/** Closed without its end and without an error (the socket went away): cut like undici says. */
function onSourceClose(this: WithReply): void {
  const reply = this[kReply];
  if (reply && !reply.ended) reply.fail(new TypeError('terminated'));
}

/**
 * The runtime's `Response` (undici's) as this module found it: what UpstreamResponse extends and
 * materialises, whatever replaces the global later.
 */
const WebResponse = Response;

/** One shared decoder: `decode` without `stream` keeps no state between calls (a leading BOM is dropped, as undici's `text()` does). */
const utf8 = new TextDecoder();

/**
 * An upstream reply as a `Response`, without undici's `Response` on the hot path: `status`,
 * `statusText`, `ok`, `headers` (built from `rawHeaders` on first use), `body` (the pull-based
 * stream, made on first use), `bodyUsed`, and `arrayBuffer()`, `bytes()`, `text()`, `json()`, which
 * read the (decoded) reply straight into one Buffer with no web stream — rejecting as undici's do:
 * `TypeError('terminated')` for a body cut mid-way, the signal's reason for an abort, a TypeError
 * for a body already used. Any other member (`clone()`, `blob()`, `formData()`, `type`, `url`, …,
 * and undici's internal slots) makes a real `Response` once — same body stream, the headers as
 * they are then — and answers from it. Its prototype chain reaches `Response.prototype`, so
 * `instanceof Response` holds.
 */
export class UpstreamResponse {
  readonly #status: number;
  readonly #statusText: string;
  readonly #message: IncomingMessage;
  /** `null` for a reply without a body (204, HEAD, …). */
  readonly #reply: ReplyBody | null;
  #headers: Headers | undefined;
  /** The body stream this object made: `undefined` until first asked for. */
  #body: ReadableStream<Uint8Array> | undefined;
  /** Read (or being read) by `arrayBuffer()`, `bytes()`, `text()` or `json()`. */
  #used = false;
  /** The real `Response`, once a member only it answers was asked for. */
  #response: Response | undefined;
  /** The real `Response` carries {@link UpstreamResponse.#body} (not a stand-in for a body already used). */
  #shared = false;

  constructor(message: IncomingMessage, status: number, reply: ReplyBody | null) {
    this.#message = message;
    this.#status = status;
    this.#statusText = message.statusMessage ?? '';
    this.#reply = reply;
  }

  get status(): number {
    return this.#status;
  }

  get statusText(): string {
    return this.#statusText;
  }

  get ok(): boolean {
    return this.#status >= 200 && this.#status <= 299;
  }

  get headers(): Headers {
    if (this.#headers === undefined) this.#headers = responseHeaders(this.#message, new Headers());
    return this.#headers;
  }

  get body(): ReadableStream<Uint8Array> | null {
    const response = this.#response;
    // clone() on the real Response tees the stream and keeps one branch: from then on, that is the body.
    return response !== undefined && this.#shared ? response.body : this.#ownBody();
  }

  get bodyUsed(): boolean {
    const response = this.#response;
    if (response !== undefined && this.#shared) return response.bodyUsed;
    if (this.#used) return true;
    const body = this.#body;
    return body !== undefined && isDisturbed(body);
  }

  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read(toArrayBuffer, 'arrayBuffer');
  }

  bytes(): Promise<Uint8Array> {
    return this.#read(toBytes, 'bytes');
  }

  text(): Promise<string> {
    return this.#read(toText, 'text');
  }

  json(): Promise<unknown> {
    return this.#read(toJson, 'json');
  }

  /** Reads the whole body into one Buffer, or has the real Response read it once there is one (or a stream was handed out). */
  #read<T>(convert: (bytes: Buffer) => T, name: 'arrayBuffer' | 'bytes' | 'text' | 'json'): Promise<T> {
    const reply = this.#reply;
    if (reply === null) {
      // No body: every read answers an empty one, as undici's does, as often as asked.
      try {
        return Promise.resolve(convert(Buffer.alloc(0)));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (this.#response !== undefined || this.#body !== undefined) {
      try {
        const response = this[kMaterialise]() as unknown as Record<typeof name, () => Promise<T>>;
        return response[name]();
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (this.#used) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    this.#used = true;
    return reply.readAll().then(convert);
  }

  /**
   * The body's chunks with no web stream, for a body nobody read or asked for yet (see `bodyReader`
   * of @tollgate/core); the body is used from then on. Undefined otherwise: the caller reads `body`.
   */
  [BODY_READER](): BodyReader | undefined {
    const reply = this.#reply;
    if (reply === null || this.#used || this.#body !== undefined || this.#response !== undefined) return undefined;
    this.#used = true;
    return reply.reader();
  }

  #ownBody(): ReadableStream<Uint8Array> | null {
    const reply = this.#reply;
    if (reply === null) return null;
    if (this.#body === undefined) {
      if (this.#used) {
        // Read by arrayBuffer() and the like: a stream that is empty and disturbed, as undici's would be.
        const used = new ReadableStream<Uint8Array>({ type: 'bytes' });
        used.cancel().catch(ignore);
        this.#body = used;
      } else this.#body = reply.stream();
    }
    return this.#body;
  }

  /** The real `Response`, made once. */
  [kMaterialise](): Response {
    if (this.#response !== undefined) return this.#response;
    const body = this.#ownBody();
    const init: ResponseInit = { status: this.#status, statusText: this.#statusText };
    if (this.#headers !== undefined) init.headers = this.#headers;
    // A body already read (or locked by a reader) cannot be given to a Response: a stand-in marked as
    // used makes the real Response refuse its body as undici's own would (`text()` rejects,
    // `clone()` throws), while `body` and `bodyUsed` keep answering from the stream itself.
    const usable = body === null || !(this.#used || body.locked || isDisturbed(body));
    const response = new WebResponse(usable ? body : new ReadableStream<Uint8Array>(), init);
    if (!usable) response.arrayBuffer().catch(ignore);
    if (this.#headers === undefined) {
      responseHeaders(this.#message, response.headers);
      this.#headers = response.headers;
    }
    this.#response = response;
    this.#shared = usable;
    return response;
  }
}

/** Before each reply: follows a global `Response` replaced by a subclass later (packages/node/src/stand-in.ts). */
const followResponse = standInFor(UpstreamResponse, WebResponse, new WebResponse(null), () => Response);

/**
 * The `Response` of an upstream reply: an {@link UpstreamResponse}, or the real `Response` it
 * stands for where this runtime's undici would not take one for its own (see {@link lightResponsesWork}).
 * A global `Response` replaced by a subclass of the runtime's (as `serve()` of @hono/node-server
 * does) is followed, so that `instanceof Response` holds with it too.
 */
export function upstreamResponse(message: IncomingMessage, status: number, reply: ReplyBody | null): Response {
  followResponse();
  const response = new UpstreamResponse(message, status, reply);
  if (!(response instanceof WebResponse)) throw new TypeError('UpstreamResponse does not extend Response.');
  return lightResponsesWork() ? response : response[kMaterialise]();
}

let works: boolean | undefined;

/**
 * Whether undici's own `Response` members work on an UpstreamResponse (`Response.prototype.clone`
 * and getters called on it, as code holding the prototype's functions does), through the slots
 * forwarded above. An undici that keeps its state in private fields (undici 7) does not: there
 * every reply is a real `Response` at once, as before UpstreamResponse.
 */
export function lightResponsesWork(): boolean {
  if (works === undefined) {
    try {
      const message = { rawHeaders: ['x-probe', '1'], statusMessage: 'Made' } as unknown as IncomingMessage;
      const probe = new UpstreamResponse(message, 201, null);
      let status: (() => unknown) | undefined;
      for (let prototype: object | null = WebResponse.prototype; status === undefined && prototype !== null; prototype = Object.getPrototypeOf(prototype)) {
        status = Object.getOwnPropertyDescriptor(prototype, 'status')?.get;
      }
      const clone = Reflect.apply(WebResponse.prototype.clone, probe, []) as Response;
      works =
        probe instanceof WebResponse &&
        status !== undefined &&
        Reflect.apply(status, probe, []) === 201 &&
        clone.status === 201 &&
        clone.statusText === 'Made' &&
        clone.headers.get('x-probe') === '1';
    } catch {
      works = false;
    }
  }
  return works;
}

/** The reply's headers appended to `headers`; a header a web Headers refuses (odd bytes) is dropped rather than failing the call. */
function responseHeaders(message: IncomingMessage, headers: Headers): Headers {
  const raw = message.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    try {
      headers.append(raw[index] as string, raw[index + 1] as string);
    } catch {
      // dropped
    }
  }
  return headers;
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  // A Buffer of node's may be a view on a shared pool: the caller gets an ArrayBuffer of its own.
  const buffer = bytes.buffer as ArrayBuffer;
  if (bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength) return buffer;
  return buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

function toBytes(bytes: Buffer): Uint8Array {
  return new Uint8Array(toArrayBuffer(bytes));
}

function toText(bytes: Buffer): string {
  return utf8.decode(bytes);
}

function toJson(bytes: Buffer): unknown {
  return JSON.parse(utf8.decode(bytes));
}

/** Whether a web stream was read from or cancelled: node:stream's `isDisturbed`, which takes web streams too (its types name only Node's). */
function isDisturbed(stream: ReadableStream<Uint8Array>): boolean {
  return Reflect.apply(Readable.isDisturbed, Readable, [stream]) === true;
}

function ignore(): void {}
