import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** Settings of {@link createUpstreamFetch}. */
export interface UpstreamFetchOptions {
  /** Connections per upstream origin, in use and idle (default 256). */
  maxSockets?: number;
  /** An idle pooled connection is closed after this long, or sooner when the upstream's Keep-Alive hint says so (default 4,000 ms). */
  idleTimeoutMs?: number;
  /** A connection not made within this long fails like undici's (`UND_ERR_CONNECT_TIMEOUT`) (default 10,000 ms). */
  connectTimeoutMs?: number;
}

/** A fetch for the providers, and a way to close its pooled connections. */
export interface UpstreamFetch {
  fetch: typeof globalThis.fetch;
  /** Closes every pooled connection (calls in flight are cut). */
  close(): void;
}

/** Statuses whose reply has no body (a web Response refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch on node:http / node:https with keep-alive pools, for the providers' upstream calls: the
 * reply body is a pull-based web byte stream read straight off the socket (no undici body
 * machinery), so a slow client slows the upstream read. Failures look like undici's: a request
 * that got no reply rejects with `TypeError('fetch failed', { cause })` (the cause carries the
 * socket's code, e.g. ECONNREFUSED, which the providers map to `upstream_unavailable`); a body cut
 * mid-way errors with `TypeError('terminated')`; an abort rejects or errors with the signal's
 * reason and destroys the connection. Differences from the global fetch: redirects are returned,
 * not followed; no `accept-encoding` is sent unless the caller sets one (gzip, deflate and br
 * replies are still decoded); anything it does not handle (a `Request` input, a stream or form
 * body, another scheme) goes to the global fetch.
 *
 * @example
 * const upstream = createUpstreamFetch();
 * const provider = openaiCompatible({ baseURL, apiKey, fetch: upstream.fetch });
 */
export function createUpstreamFetch(options: UpstreamFetchOptions = {}): UpstreamFetch {
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 256,
    maxFreeSockets: options.maxSockets ?? 256,
    timeout: options.idleTimeoutMs ?? 4_000,
  };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;

  const upstreamFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
    const body = requestBody(init.body);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || body === false) return globalThis.fetch(input, init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const headers = requestHeaders(init.headers);
    if (body !== undefined) headers['content-length'] = String(body.byteLength);
    const secure = url.protocol === 'https:';
    return new Promise<Response>((resolve, reject) => {
      const request = (secure ? https : http).request({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: init.method ?? 'GET',
        headers,
        agent: secure ? httpsAgent : httpAgent,
      });
      // Set once the reply arrived: from then on failures belong to its body.
      let onBodyFailure: ((error: unknown) => void) | undefined;
      let connectTimer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        if (onBodyFailure) onBodyFailure(signal?.reason);
        else reject(signal?.reason);
        request.destroy();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const detach = () => signal?.removeEventListener('abort', onAbort);
      request.on('socket', (socket) => {
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => {
          request.destroy(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }));
        }, connectTimeoutMs);
        socket.once('connect', () => clearTimeout(connectTimer));
      });
      request.on('error', (error) => {
        clearTimeout(connectTimer);
        if (onBodyFailure) return onBodyFailure(new TypeError('terminated', { cause: error }));
        detach();
        reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
      });
      request.on('response', (response) => {
        clearTimeout(connectTimer);
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 599) {
          detach();
          response.destroy();
          reject(new TypeError('fetch failed', { cause: new Error(`invalid status ${status}`) }));
          return;
        }
        const init = { status, statusText: response.statusMessage ?? '', headers: responseHeaders(response) };
        if (NULL_BODY_STATUSES.has(status) || request.method === 'HEAD') {
          detach();
          response.resume();
          resolve(new Response(null, init));
          return;
        }
        const stream = readBody(response, detach);
        onBodyFailure = stream.fail;
        resolve(new Response(stream.body, init));
      });
      request.end(body);
    });
  };

  return {
    fetch: upstreamFetch,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** The body as bytes; `undefined` for none; `false` for a kind this transport leaves to the global fetch. */
function requestBody(body: RequestInit['body']): Uint8Array | undefined | false {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return false;
}

function requestHeaders(init: RequestInit['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!init) return headers;
  // The providers pass plain records: read them directly instead of through a Headers object.
  if (!(init instanceof Headers) && !Array.isArray(init)) {
    for (const [name, value] of Object.entries(init)) headers[name.toLowerCase()] = String(value);
    return headers;
  }
  for (const [name, value] of new Headers(init)) headers[name] = value;
  return headers;
}

function responseHeaders(response: http.IncomingMessage): Headers {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index];
    const value = raw[index + 1];
    if (name === undefined || value === undefined) break;
    try {
      headers.append(name, value);
    } catch {
      // A header a web Headers refuses (odd bytes) is dropped rather than failing the call.
    }
  }
  return headers;
}

/**
 * The reply body as a pull-based web byte stream: each pull takes what the socket has buffered
 * (`read()`), so nothing is read ahead of the consumer beyond node's own stream buffer. `fail`
 * errors it at once (abort, socket error); cancel destroys the connection.
 */
function readBody(response: http.IncomingMessage, onOver: () => void): { body: ReadableStream<Uint8Array>; fail(error: unknown): void } {
  const source = decoded(response);
  let controller: ReadableByteStreamController | undefined;
  let ended = false;
  let over = false;
  let wake: (() => void) | undefined;
  const finish = () => {
    if (over) return false;
    over = true;
    onOver();
    return true;
  };
  const fail = (error: unknown) => {
    if (!finish()) return;
    source.destroy();
    response.destroy();
    controller?.error(error);
    wake?.();
  };
  source.on('readable', () => wake?.());
  source.on('end', () => {
    ended = true;
    wake?.();
  });
  source.on('error', (error) => fail(new TypeError('terminated', { cause: error })));
  // Closed without its end and without an error (the socket went away): cut like undici says.
  source.on('close', () => {
    if (!ended) fail(new TypeError('terminated'));
  });
  const body = new ReadableStream(
    {
      type: 'bytes',
      start(c) {
        controller = c;
      },
      async pull(c) {
        for (;;) {
          if (over) return;
          const chunk: Buffer | null = source.read();
          // A copy: a byte stream takes over the chunk's ArrayBuffer, which node shares between chunks.
          if (chunk !== null) return c.enqueue(new Uint8Array(chunk));
          if (ended) {
            finish();
            return c.close();
          }
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
        }
      },
      cancel() {
        finish();
        // Every byte already arrived (a stream cancelled right after its last event): reading out the
        // buffered rest ends the reply and hands the connection back to the pool instead of closing it.
        if (response.complete && source === response) {
          while (response.read() !== null);
          return;
        }
        source.destroy();
        response.destroy();
      },
    },
    { highWaterMark: 0 },
  );
  return { body, fail };
}

/** The reply's bytes, decoded when the upstream compressed them (a caller that asked for it). */
function decoded(response: http.IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? zlib.createGunzip()
      : encoding === 'deflate'
        ? zlib.createInflate()
        : encoding === 'br'
          ? zlib.createBrotliDecompress()
          : undefined;
  if (!decoder) return response;
  response.on('error', (error) => decoder.destroy(error));
  return response.pipe(decoder);
}
