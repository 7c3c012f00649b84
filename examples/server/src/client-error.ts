import type { Duplex } from 'node:stream';
import { errorRecord, type ErrorCode, HEADER } from '@tollgate/core';

/** A `clientError` as Node's HTTP server emits it: a parser error code and the bytes it choked on. */
export interface ClientError extends Error {
  /** `HPE_*` from the parser, `ERR_HTTP_REQUEST_TIMEOUT`, or a socket error such as `ECONNRESET`. */
  code?: string;
  /** The bytes the parser was reading when it failed. */
  rawPacket?: unknown;
}

/** What the server answers to one parser error. */
interface Reply {
  status: number;
  reason: string;
  /** Envelope code; undefined for the plain-text 405. */
  code?: ErrorCode;
  message: string;
}

/** `METHOD target HTTP/x.y`: a request line whose only fault is a method the parser does not know. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^\s]+ HTTP\/\d\.\d\r?\n/;

/**
 * The reply to a request Node's HTTP parser refused before the gateway ran: the same
 * `X-Service-Version` and error envelope as every other reply (docs/http-api.md, "Replies made
 * before the gateway runs"). An unknown method is the gateway's plain-text 405; headers over
 * Node's 16 KB limit are 431 with the `request_too_large` envelope; a request whose headers did
 * not arrive in time is 408 `request_timeout`; anything else malformed is 400 `invalid_request_body`.
 */
export function clientErrorReply(error: ClientError): Reply | undefined {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return undefined;
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', code: 'request_too_large', message: 'The request headers are larger than 16 KB.' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', code: 'request_too_large', message: 'The chunk extensions of the request body are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', code: 'request_timeout', message: 'The request did not arrive within the time allowed.' };
    case 'HPE_INVALID_METHOD':
      if (REQUEST_LINE.test(packetText(error.rawPacket))) return { status: 405, reason: 'Method Not Allowed', message: 'Method Not Allowed' };
  }
  return { status: 400, reason: 'Bad Request', code: 'invalid_request_body', message: 'The request is not valid HTTP/1.1.' };
}

/**
 * A `clientError` listener for the reference server's node:http server: writes
 * {@link clientErrorReply} to the socket unless a reply is already under way on it (a corrupt
 * frame would follow its bytes), then closes the connection.
 *
 * @example
 * server.on('clientError', answerClientError('tollgate/0.1.0'));
 */
export function answerClientError(version: string): (error: ClientError, socket: Duplex) => void {
  return (error, socket) => {
    const reply = clientErrorReply(error);
    if (reply === undefined || !socket.writable || replyUnderWay(socket)) return void socket.destroy();
    const body = reply.code === undefined ? reply.message : JSON.stringify(errorRecord(reply.code, reply.message));
    const contentType = reply.code === undefined ? 'text/plain; charset=utf-8' : 'application/json';
    socket.end(
      `HTTP/1.1 ${reply.status} ${reply.reason}\r\ncontent-type: ${contentType}\r\n${HEADER.serviceVersion}: ${version}\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    // A client that never reads or closes does not keep the socket.
    setTimeout(() => socket.destroy(), 5_000).unref();
  };
}

/**
 * Node keeps the reply owed on a socket as `_httpMessage`. The socket is mid-reply once its head went
 * out; and while it is owed to a request read whole, the bad bytes belong to a later, pipelined
 * request, whose answer written now would go out as that earlier request's reply: the connection is
 * cut instead. (A bad body of the request the reply is owed to is still answered.)
 */
function replyUnderWay(socket: Duplex): boolean {
  const message: unknown = Reflect.get(socket, '_httpMessage');
  if (typeof message !== 'object' || message === null) return false;
  if (Reflect.get(message, 'headersSent') === true) return true;
  const request: unknown = Reflect.get(message, 'req');
  return Reflect.get(message, 'writableFinished') !== true && typeof request === 'object' && request !== null && Reflect.get(request, 'complete') === true;
}

function packetText(packet: unknown): string {
  return packet instanceof Uint8Array ? Buffer.from(packet).toString('latin1', 0, Math.min(packet.byteLength, 8_192)) : '';
}
