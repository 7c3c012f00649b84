/** Helpers the listener tests share: a listener served on loopback with its socket writes counted, a raw HTTP/1.1 reply taken apart, waiting on a condition. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createNodeListener, type FetchHandler, type NodeListenerOptions } from '../src/node-listener';
import { listenOnLoopback } from './listen';

/** A listener served on a loopback port. */
export interface Served {
  port: number;
  url: string;
  server: Server;
  /** The incoming messages, in order. */
  incoming: IncomingMessage[];
  /** Socket writes (`_write` and `_writev` calls) per server-side connection, in order of connection. */
  writes: number[];
}

/** Serves `fetch` through createNodeListener on a loopback port (closed by `cleanups`), counting the socket writes of each connection. */
export async function serveListener(fetch: FetchHandler, cleanups: (() => unknown)[], options?: NodeListenerOptions): Promise<Served> {
  const listener = createNodeListener(fetch, options);
  const incoming: IncomingMessage[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    incoming.push(request);
    listener(request, response);
  });
  const writes = countSocketWrites(server);
  const port = await listenOnLoopback(server, cleanups);
  return { port, url: `http://127.0.0.1:${port}`, server, incoming, writes };
}

/** A raw reply's status, headers (lower-cased names) and body as it came (chunked framing included). */
export function parse(reply: string): { status: number; headers: Record<string, string>; body: string } {
  const at = reply.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = reply.slice(0, at).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: reply.slice(at + 4) };
}

/** Resolves once `test()` holds (polled every 5 ms); rejects after `ms`. */
export async function until(test: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the socket writes (`_write` and `_writev` calls) of each connection `server` accepts, in order of connection. */
function countSocketWrites(server: Server): number[] {
  const writes: number[] = [];
  server.on('connection', (socket: Socket) => {
    const index = writes.push(0) - 1;
    const counted = socket as Socket & { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    const write = counted._write.bind(socket);
    const writev = counted._writev.bind(socket);
    counted._write = (...args) => {
      writes[index] = (writes[index] ?? 0) + 1;
      write(...args);
    };
    counted._writev = (...args) => {
      writes[index] = (writes[index] ?? 0) + 1;
      writev(...args);
    };
  });
  return writes;
}
