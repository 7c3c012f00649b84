/**
 * A raw HTTP/1.1 exchange over a TCP socket, for requests no HTTP client will send (malformed
 * lines, conflicting lengths, slow or endless bodies). Each exchange is bounded in time.
 */
import { connect } from 'node:net';
import { recordOutput } from './secrets-log';

/** A reply as read off the socket; status 0 when none came. */
export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds until the server closed or the bound passed. */
  ms: number;
  /** The bound passed before the server closed. */
  timedOut: boolean;
}

/** Options of {@link rawExchange}. */
export interface RawOptions {
  /** Bytes sent after the first ones, each after `gapMs`. */
  more?: (string | Uint8Array)[];
  gapMs?: number;
  /** Gives up after this long (default 15 s). */
  timeoutMs?: number;
}

/** Sends `bytes` (then `more`, paced), reads until the server closes; parses the first reply. */
export function rawExchange(port: number, bytes: string | Uint8Array, options: RawOptions = {}): Promise<RawReply> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    timers.push(
      setTimeout(() => {
        timedOut = true;
        socket.destroy();
      }, options.timeoutMs ?? 15_000),
    );
    socket.once('connect', () => {
      socket.write(bytes);
      (options.more ?? []).forEach((piece, index) => {
        timers.push(setTimeout(() => socket.writable && socket.write(piece), (index + 1) * (options.gapMs ?? 100)));
      });
    });
    socket.on('data', (data: Buffer) => chunks.push(data));
    socket.on('error', () => {});
    socket.once('close', () => {
      for (const timer of timers) clearTimeout(timer);
      const reply = parseReply(Buffer.concat(chunks).toString('utf8'));
      recordOutput(reply.body);
      resolve({ ...reply, ms: performance.now() - started, timedOut });
    });
  });
}

/** Status, headers and (de-chunked) body of the first reply in `text`. */
export function parseReply(text: string): { status: number; headers: Record<string, string>; body: string } {
  // A 100 Continue comes first when the request asked for it.
  const rest = text.startsWith('HTTP/1.1 100') ? text.slice(text.indexOf('\r\n\r\n') + 4) : text;
  const end = rest.indexOf('\r\n\r\n');
  if (!rest.startsWith('HTTP/') || end < 0) return { status: 0, headers: {}, body: rest };
  const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    if (at > 0) headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  let body = rest.slice(end + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.slice(0, Number(headers['content-length']));
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

function dechunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const line = text.indexOf('\r\n', at);
    if (line < 0) return out;
    const size = Number.parseInt(text.slice(at, line), 16);
    if (!(size > 0)) return out;
    out += text.slice(line + 2, line + 2 + size);
    at = line + 2 + size + 2;
  }
}
