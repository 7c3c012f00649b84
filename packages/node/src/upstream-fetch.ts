import http from 'node:http';
import https from 'node:https';
import { ReplyBody, type UpstreamResponse, upstreamResponse } from './upstream-response';

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

/** Where a request goes, as node:http takes it, read once from its URL. */
interface Target {
  protocol: 'http:' | 'https:';
  secure: boolean;
  hostname: string;
  port: number;
  path: string;
}

/** URLs whose targets are kept at most (a cache that is full starts again). */
const MAX_TARGETS = 256;

/** The target of an http(s) URL; undefined for another scheme (the global fetch serves it). */
function toTarget(url: URL): Target | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const secure = url.protocol === 'https:';
  return {
    protocol: url.protocol,
    secure,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
  };
}

/** Statuses whose reply has no body (a web Response refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A fetch on node:http / node:https with keep-alive pools, for the providers' upstream calls: the
 * reply is a lightweight `Response` (see {@link UpstreamResponse}: `json()`, `text()`,
 * `arrayBuffer()` and `bytes()` read the reply straight into one Buffer; `body` is a pull-based web
 * byte stream read off the socket, so a slow client slows the upstream read; other members make a
 * real `Response` once). Failures look like undici's: a request
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

  // A provider calls the same few URLs over and over: each is parsed once (a bounded cache).
  const targets = new Map<string, Target | undefined>();
  const targetOf = (input: string | URL | Request): Target | undefined => {
    if (input instanceof URL) return toTarget(input);
    if (typeof input !== 'string') return undefined;
    let target = targets.get(input);
    if (target === undefined && !targets.has(input)) {
      target = URL.canParse(input) ? toTarget(new URL(input)) : undefined;
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(input, target);
    }
    return target;
  };

  const upstreamFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const target = targetOf(input);
    const body = requestBody(init.body);
    if (!target || body === false) return globalThis.fetch(input, init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const headers = requestHeaders(init.headers);
    if (body !== undefined) headers['content-length'] = String(body.byteLength);
    const { secure } = target;
    const request = (secure ? https : http).request({
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      path: target.path,
      method: init.method ?? 'GET',
      headers,
      agent: secure ? httpsAgent : httpAgent,
    });
    // The reply is awaited by closures made in `awaitReply`, whose scope holds no request body:
    // made here, they would keep `body` and `init` (the whole request, twice) for as long as the
    // reply's body is read — a stream's whole life.
    const reply = awaitReply(request, signal, connectTimeoutMs);
    request.end(body);
    return reply;
  };

  return {
    fetch: upstreamFetch,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** The reply to `request` as a `Response`, failing as undici's fetch does (see {@link createUpstreamFetch}). */
function awaitReply(request: http.ClientRequest, signal: AbortSignal | undefined, connectTimeoutMs: number): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
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
      if (NULL_BODY_STATUSES.has(status) || request.method === 'HEAD') {
        detach();
        response.resume();
        resolve(upstreamResponse(response, status, null));
        return;
      }
      const reply = new ReplyBody(response, detach);
      onBodyFailure = (error) => reply.fail(error);
      resolve(upstreamResponse(response, status, reply));
    });
  });
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
