import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';

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
 * message or of a decoder errors the stream returned. Shared by the upstream fetch and the page
 * fetcher's transport.
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
    if (coding === '') continue;
    const decoder = decoderOf(coding);
    if (decoder === undefined) {
      for (const made of decoders) made.destroy();
      return message;
    }
    if (decoder !== null) decoders.push(decoder);
  }
  let stream: Readable = message;
  for (const decoder of decoders) {
    const from = stream;
    from.on('error', (error) => decoder.destroy(error));
    stream = from.pipe(decoder);
  }
  return stream;
}
