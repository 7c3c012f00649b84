import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

/** Options of {@link listen}. */
export interface ListenOptions {
  /** Port to listen on; default a free one. */
  port?: number;
}

/** A running loopback server. */
export interface Listening {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Stops listening and closes every connection, open streams included. */
  close(): Promise<void>;
}

/**
 * Serves a fetch-style handler on 127.0.0.1: request bodies arrive as streams, response bodies are
 * written with backpressure, a client that disconnects aborts `request.signal` and cancels the
 * response body, and a response body that errors drops the connection (as a crashed upstream would).
 *
 * @example
 * const upstream = fakeOpenAI();
 * const server = await listen(upstream.handle);
 * const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'k' });
 * await server.close();
 */
export async function listen(handler: (request: Request) => Promise<Response>, options: ListenOptions = {}): Promise<Listening> {
  const server = createServer((incoming, outgoing) => {
    void serve(handler, incoming, outgoing);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function serve(handler: (request: Request) => Promise<Response>, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  const controller = new AbortController();
  // 'close' on the response fires when it finished or when the socket went away; only the latter aborts.
  outgoing.on('close', () => {
    if (!outgoing.writableFinished) controller.abort(new DOMException('The client disconnected.', 'AbortError'));
  });
  let response: Response;
  try {
    response = await handler(toRequest(incoming, controller.signal));
  } catch (error) {
    if (controller.signal.aborted) return;
    // A handler that throws like a refused connection: drop the socket, which is the closest an HTTP server gets.
    if (error instanceof TypeError && error.message === 'fetch failed') return void incoming.socket.destroy();
    outgoing.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    return;
  }
  if (controller.signal.aborted) {
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers['set-cookie'] = cookies;
  outgoing.writeHead(response.status, headers);
  if (!response.body) return void outgoing.end();
  outgoing.flushHeaders();
  await pipe(response.body, outgoing, controller.signal);
}

async function pipe(body: ReadableStream<Uint8Array>, outgoing: ServerResponse, signal: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel(signal.reason).catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!outgoing.write(value)) {
        await new Promise<void>((resolve) => {
          const settle = () => {
            outgoing.off('drain', settle);
            outgoing.off('close', settle);
            resolve();
          };
          outgoing.on('drain', settle);
          outgoing.on('close', settle);
        });
      }
      if (signal.aborted) return;
    }
    outgoing.end();
  } catch {
    // The body failed mid-way: drop the connection so the client sees a cut, not a clean end.
    outgoing.destroy();
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function toRequest(incoming: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < incoming.rawHeaders.length; i += 2) headers.append(incoming.rawHeaders[i]!, incoming.rawHeaders[i + 1]!);
  const method = incoming.method ?? 'GET';
  const url = `http://${incoming.headers.host ?? '127.0.0.1'}${incoming.url ?? '/'}`;
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal };
  if (hasBody) {
    init.body = Readable.toWeb(incoming) as unknown as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  return new Request(url, init);
}

/** A TCP port on 127.0.0.1 that is free right now, for servers a test starts (Redis, PostgreSQL, an admin port). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
