import type { IncomingMessage } from 'node:http';
import { Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';

/** The most content codings a reply may stack for us to undo them (as undici's fetch). */
export const MAX_CONTENT_CODINGS = 5;

/** A decoder of one HTTP content coding (RFC 9110 §8.4.1): null for `identity`, undefined for one not known here. */
function decoderOf(coding: string): Transform | null | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'identity':
      return null;
    default:
      return undefined;
  }
}

/**
 * A reply's bytes with its `Content-Encoding` undone: every coding of the list (`gzip`, `x-gzip`,
 * `deflate`, `br`; `identity` skips), the one applied last undone first, so `gzip, br` is
 * decoded by brotli then gunzip. The message itself when it names no coding, or any coding not
 * known here (its bytes go on as they came, and the caller keeps the header). An error of the
 * message or of a decoder errors the stream returned. More than {@link MAX_CONTENT_CODINGS} codings
 * to undo fail the stream on its first read (undici's fetch refuses them too): each decoder holds
 * a window of its own, and a header can name thousands. A stream that closes before its end (a
 * cancel, a byte cap) takes the message, and so the connection, and every decoder with it:
 * `pipe` alone would only unpipe them. Shared by the upstream fetch and the page fetcher's
 * transport.
 *
 * @example
 * const body = decodedBody(message);
 * const decoded = body !== message; // drop Content-Encoding and Content-Length then
 */
export function decodedBody(message: IncomingMessage): Readable {
  const header = message.headers['content-encoding'];
  if (header === undefined) return message;
  const codings = header.toLowerCase().split(',');
  const decoders: Transform[] = [];
  for (let index = codings.length - 1; index >= 0; index--) {
    const coding = (codings[index] as string).trim();
    if (coding === '' || coding === 'identity') continue;
    if (decoders.length === MAX_CONTENT_CODINGS) {
      for (const made of decoders) made.destroy();
      return refused(message, new TypeError(`the reply names more than ${MAX_CONTENT_CODINGS} content codings`));
    }
    const decoder = decoderOf(coding);
    if (decoder === undefined) {
      for (const made of decoders) made.destroy();
      return message;
    }
    if (decoder !== null) decoders.push(decoder);
  }
  if (decoders.length === 0) return message;
  let stream: Readable = message;
  for (const decoder of decoders) {
    const from = stream;
    from.on('error', (error) => decoder.destroy(error));
    stream = from.pipe(decoder);
  }
  const last = stream;
  last.once('close', () => {
    if (last.readableEnded) return;
    message.destroy();
    for (const decoder of decoders) decoder.destroy();
  });
  return last;
}

/**
 * A body that fails with `error` when first read (by then its reader listens for errors; an error
 * emitted at once could find no listener), its message destroyed with it.
 */
function refused(message: IncomingMessage, error: Error): Readable {
  return new Readable({
    read() {
      this.destroy(error);
    },
    destroy(reason, callback) {
      message.destroy();
      callback(reason);
    },
  });
}
