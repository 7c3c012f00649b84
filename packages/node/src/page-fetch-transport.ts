import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Readable } from 'node:stream';
import { decodedBody } from './decoded-body';
import type { PageResolver, PageTransport } from '@tollgate/providers';

/**
 * DNS for the page fetcher: every A and AAAA address of a name, through the system resolver
 * (`dns.promises.lookup` with `all: true`, so /etc/hosts counts too — and is checked too).
 *
 * @example
 * createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport() });
 */
export function nodeResolver(): PageResolver {
  return async (hostname) => {
    const results = await lookup(hostname, { all: true, verbatim: true });
    return results.map((result) => result.address);
  };
}

/** Statuses whose reply has no body (a web Response refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function webHeaders(response: http.IncomingMessage, decodedBody: boolean): Headers {
  const headers = new Headers();
  const raw = response.rawHeaders;
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index]?.toLowerCase();
    const value = raw[index + 1];
    if (name === undefined || value === undefined) break;
    if (decodedBody && (name === 'content-encoding' || name === 'content-length')) continue;
    try {
      headers.append(name, value);
    } catch {
      // A header a web Headers refuses (odd bytes) is dropped rather than failing the page.
    }
  }
  return headers;
}

/**
 * A node stream as a pull-based web byte stream: a chunk is read only when the page fetcher asks
 * for one, so its byte cap stops the download; a socket error or the signal's abort errors it;
 * cancelling it destroys the source (and so the connection).
 */
function webBody(source: Readable): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) return controller.close();
        const chunk: unknown = next.value;
        controller.enqueue(chunk instanceof Uint8Array ? chunk : new TextEncoder().encode(String(chunk)));
      },
      async cancel() {
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The page fetcher's transport on node:http / node:https: connects to the checked address
 * itself (no second DNS lookup, so DNS rebinding cannot swap it), sends `Host` and TLS SNI (and
 * verifies the certificate) for the URL's host name, uses no connection pool, decodes
 * gzip/deflate/br, follows no redirect, and returns a web Response with a streamed body that the
 * signal aborts.
 *
 * @example
 * const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport() });
 */
export function nodeTransport(): PageTransport {
  return ({ url, address, signal, headers }) =>
    new Promise<Response>((resolve, reject) => {
      const family = isIP(address);
      if (family === 0) {
        reject(new TypeError('the transport takes an IP address'));
        return;
      }
      // `host` is the address, so no lookup happens; the lookup below pins it should one happen.
      const pinned: LookupFunction = (_hostname, options, callback) => {
        if (options.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      };
      const secure = url.protocol === 'https:';
      const servername = isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0 ? url.hostname : undefined;
      const request = (secure ? https : http).request({
        host: address,
        family,
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { ...headers, host: url.host, 'accept-encoding': 'gzip, deflate, br', connection: 'close' },
        lookup: pinned,
        agent: false,
        signal,
        ...(secure ? { servername } : {}),
      });
      request.on('error', reject);
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 599) {
          response.destroy();
          reject(new TypeError('the page answered with an invalid status'));
          return;
        }
        if (NULL_BODY_STATUSES.has(status)) {
          response.resume();
          resolve(new Response(null, { status, headers: webHeaders(response, false) }));
          return;
        }
        // The fetcher's byte cap counts decoded bytes, so a compression bomb is cut like any large body.
        const stream = decodedBody(response);
        resolve(new Response(webBody(stream), { status, headers: webHeaders(response, stream !== response) }));
      });
      request.end();
    });
}
