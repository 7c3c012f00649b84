import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorRecord, type ErrorCode, HEADER } from '@tollgate/core';
import { createNodeListener } from '@tollgate/node';
import { answerClientError } from './client-error';

/** Options of {@link serveGateway}. */
export interface ServeGatewayOptions {
  /** The gateway's fetch. */
  fetch: (request: Request) => Response | Promise<Response>;
  /** `X-Service-Version`. */
  version: string;
  /** The host name requests are resolved against (the server's `HOST`), and listened on. */
  hostname: string;
  /** The port to listen on (0: any free one). */
  port: number;
  /** Where an error the gateway let escape is reported (never to the client). */
  onError: (error: unknown) => void;
  /** A client that takes nothing for this long has its connection closed (createNodeListener's `stallTimeoutMs`). */
  stallTimeoutMs?: number;
}

/**
 * The gateway's node:http server on `createNodeListener` of `@tollgate/node` (no Hono adapter on
 * the hot path), where every reply below the gateway is one the docs describe (docs/http-api.md): parser errors via `answerClientError`; CONNECT is the plain-text 405; a
 * request that cannot be a web `Request` (a target such as `*`, a backslash in the path, a bad
 * Host) is 400 `invalid_request_body`; a request without Host is served on `hostname`; an error
 * escaping the gateway is a 503 `service_unavailable` envelope, never a 500, and goes to `onError`.
 * Listening on `port` and `hostname`.
 *
 * @example
 * const server = serveGateway({ fetch: gateway.fetch, version, hostname: '127.0.0.1', port: 8080, onError: console.error });
 */
export function serveGateway(options: ServeGatewayOptions): Server {
  const { version } = options;
  const envelope = (status: number, code: ErrorCode, message: string) =>
    new Response(JSON.stringify(errorRecord(code, message)), { status, headers: { 'content-type': 'application/json', [HEADER.serviceVersion]: version } });
  const server = createServer(
    createNodeListener(options.fetch, {
      hostname: options.hostname,
      ...(options.stallTimeoutMs === undefined ? {} : { stallTimeoutMs: options.stallTimeoutMs }),
      onError: (error, phase) => {
        if (phase === 'request') return envelope(400, 'invalid_request_body', 'The request target or Host header is not valid.');
        options.onError(error);
        return envelope(503, 'service_unavailable', 'The service could not start the request; retry.');
      },
    }),
  );
  // Node's own Host check answers a bare 400 (a property @types/node 20 does not declare yet).
  Reflect.set(server, 'requireHostHeader', false);
  server.on('clientError', answerClientError(version));
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.end(
      `HTTP/1.1 405 Method Not Allowed\r\ncontent-type: text/plain; charset=utf-8\r\n${HEADER.serviceVersion}: ${version}\r\n` +
        'content-length: 18\r\nconnection: close\r\n\r\nMethod Not Allowed',
    );
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
  // Shutdown cuts every connection the moment `gateway.idle()` resolves, which is the moment the
  // last reply was returned: that reply's bytes are written a few microtasks later (its body is
  // read off a web stream). Cutting on the next turn of the event loop lets a reply already made
  // reach its client, as @hono/node-server's fewer hops did; a stream still running is cut as before.
  const closeAllConnections = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => void setImmediate(closeAllConnections);
  return server.listen(options.port, options.hostname);
}
