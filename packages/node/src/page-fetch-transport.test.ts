import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createGzip, gzipSync } from 'node:zlib';
import { createPageFetcher } from '@tollgate/providers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver, nodeTransport } from './page-fetch-transport';

const PAGE = `<!doctype html><html><head><title>Local test page</title>
<style>body { color: red }</style><script>document.write("script-content")</script></head>
<body><nav><a href="/">Home</a></nav>
<main><h1>Welcome</h1><p>A <a href="/docs">docs link</a> and <em>emphasis</em>.</p><h2>Details</h2><p>Second paragraph.</p></main>
<footer>footer-content</footer></body></html>`;

const seen: Array<{ url: string; host: string | undefined; userAgent: string | undefined }> = [];
let hanging: http.ServerResponse | undefined;
let hangingClosed = false;
let endlessClosed = false;
const server = http.createServer((request, response) => {
  seen.push({ url: request.url ?? '', host: request.headers.host, userAgent: request.headers['user-agent'] });
  if (request.url === '/page') {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
  } else if (request.url === '/moved') {
    response.writeHead(302, { location: '/page' }).end();
  } else if (request.url === '/gzip') {
    response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' }).end(gzipSync('x'.repeat(100_000)));
  } else if (request.url === '/gzip-endless') {
    // A compressed body that never ends (random text, so it does not compress away): only the client can stop it.
    request.socket.on('close', () => {
      endlessClosed = true;
    });
    response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
    const gzip = createGzip();
    gzip.pipe(response);
    const more = () => {
      while (!response.destroyed && gzip.write(randomBytes(16_384).toString('base64')));
      if (!response.destroyed) gzip.once('drain', more);
    };
    more();
  } else if (request.url === '/empty') {
    response.writeHead(204).end();
  } else if (request.url === '/hang') {
    hanging = response;
    request.socket.on('close', () => {
      hangingClosed = true;
    });
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('partial');
  } else {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
  }
});
let base = '';
let port = 0;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  hanging?.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const loopbackOnly = (address: string) => address === '127.0.0.1';

describe('nodeTransport + createPageFetcher on a loopback server', () => {
  it('returns a local HTML page as markdown: title, headings, links, no script or style', async () => {
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport(), allowAddress: loopbackOnly, userAgent: 'tollgate-test' });
    const result = await fetcher.fetch({ url: `${base}/page`, format: 'markdown' });
    expect(result).toEqual({
      ok: true,
      page: {
        object: 'page',
        url: `${base}/page`,
        final_url: `${base}/page`,
        status: 200,
        title: 'Local test page',
        content_type: 'text/html',
        content: `# Welcome\n\nA [docs link](${base}/docs) and _emphasis_.\n\n## Details\n\nSecond paragraph.`,
        truncated: false,
      },
    });
    expect(seen.at(-1)).toEqual({ url: '/page', host: `127.0.0.1:${port}`, userAgent: 'tollgate-test' });
  });

  it('connects to the given address while sending the name as Host', async () => {
    const resolved: string[] = [];
    const fetcher = createPageFetcher({
      resolve: async (hostname) => {
        resolved.push(hostname);
        return ['127.0.0.1'];
      },
      transport: nodeTransport(),
      allowAddress: loopbackOnly,
    });
    const result = await fetcher.fetch({ url: `http://pages.test:${port}/moved`, format: 'text' });
    expect(result.ok && [result.page.final_url, result.page.title, result.page.content.split('\n')[0]]).toEqual([
      `http://pages.test:${port}/page`,
      'Local test page',
      'Welcome',
    ]);
    expect(resolved).toEqual(['pages.test', 'pages.test']);
    expect(seen.slice(-2).map((request) => [request.url, request.host])).toEqual([
      ['/moved', `pages.test:${port}`],
      ['/page', `pages.test:${port}`],
    ]);
  });

  it('refuses the loopback server without the test-only allowance, sending it nothing', async () => {
    const before = seen.length;
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport() });
    for (const url of [`${base}/page`, `http://localhost:${port}/page`, `http://2130706433:${port}/page`, `http://[::ffff:127.0.0.1]:${port}/page`]) {
      const result = await fetcher.fetch({ url, format: 'markdown' });
      expect(result).toEqual({ ok: false, code: 'invalid_parameter', message: expect.stringContaining('url') });
    }
    expect(seen.length).toBe(before);
  });

  it('decodes gzip and caps the decoded bytes', async () => {
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport(), allowAddress: loopbackOnly, maxBytes: 1000 });
    const result = await fetcher.fetch({ url: `${base}/gzip`, format: 'markdown' });
    expect(result.ok && [result.page.content, result.page.truncated]).toEqual(['x'.repeat(1000), true]);
  });

  it('closes the connection of a compressed body it cut at the byte cap', async () => {
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport(), allowAddress: loopbackOnly, maxBytes: 1000 });
    const result = await fetcher.fetch({ url: `${base}/gzip-endless`, format: 'text' });
    expect(result.ok && [result.page.content.length, result.page.truncated]).toEqual([1000, true]);
    // The decoder was let go, and so must be the message under it: else the page holds the socket open.
    await expect.poll(() => endlessClosed, { timeout: 5_000, interval: 2 }).toBe(true);
  });

  it('returns a 404 page and a 204 reply with their statuses', async () => {
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport(), allowAddress: loopbackOnly });
    const missing = await fetcher.fetch({ url: `${base}/nothing`, format: 'markdown' });
    expect(missing.ok && [missing.page.status, missing.page.content]).toEqual([404, 'no such page']);
    const empty = await fetcher.fetch({ url: `${base}/empty`, format: 'markdown' });
    expect(empty.ok && [empty.page.status, empty.page.content_type, empty.page.content]).toEqual([204, 'text/plain', '']);
  });

  it('aborts a stalled body at the time cap and closes the connection', async () => {
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport(), allowAddress: loopbackOnly, timeoutMs: 150 });
    const result = await fetcher.fetch({ url: `${base}/hang`, format: 'markdown' });
    expect(result).toEqual({ ok: false, code: 'upstream_error', message: 'The page did not load within 1 s.' });
    // The server sees the close when its socket event comes in: wait for it, not a fixed time.
    await expect.poll(() => hangingClosed, { timeout: 5_000, interval: 2 }).toBe(true);
  });

  it('maps a refused connection to upstream_unavailable', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport(), allowAddress: loopbackOnly });
    expect(await fetcher.fetch({ url: `http://127.0.0.1:${closedPort}/`, format: 'markdown' })).toEqual({
      ok: false,
      code: 'upstream_unavailable',
      message: 'The page could not be reached.',
    });
  });

  it('nodeResolver returns every address of localhost from the system resolver', async () => {
    const addresses = await nodeResolver()('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((address) => address.startsWith('127.') || address === '::1')).toBe(true);
  });
});
