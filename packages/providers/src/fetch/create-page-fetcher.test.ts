import { describe, expect, it } from 'vitest';
import { createPageFetcher } from './create-page-fetcher';
import type { PageFetcherOptions, PageTransportRequest } from './page-fetcher';

/** A DNS table and a transport that record every call and never open a socket. */
function harness(dns: Record<string, string[]>, pages: Record<string, () => Response>, extra: Partial<PageFetcherOptions> = {}) {
  const lookups: string[] = [];
  const connections: Array<{ url: string; address: string; headers: Record<string, string> }> = [];
  const fetcher = createPageFetcher({
    resolve: async (hostname) => {
      lookups.push(hostname);
      const addresses = dns[hostname];
      if (addresses === undefined) throw new Error('ENOTFOUND');
      return addresses;
    },
    transport: async (request: PageTransportRequest) => {
      connections.push({ url: request.url.href, address: request.address, headers: request.headers });
      const page = pages[request.url.href];
      if (page === undefined) throw new TypeError('connect ECONNREFUSED');
      return page();
    },
    ...extra,
  });
  return { fetcher, lookups, connections };
}

const html =
  (body: string, init: ResponseInit = {}) =>
  () =>
    new Response(body, { ...init, headers: { 'content-type': 'text/html; charset=utf-8', ...init.headers } });
const redirect =
  (location: string, status = 302) =>
  () =>
    new Response(null, { status, headers: { location } });

const PUBLIC = '93.184.215.14';

describe('createPageFetcher: SSRF guard', () => {
  const dns: Record<string, string[]> = {
    'example.com': [PUBLIC],
    'internal.example': ['10.0.0.5'],
    'mixed.example': [PUBLIC, '192.168.1.10'],
    'mixed6.example': ['2606:4700::1', 'fd00::1'],
    'metadata.example': ['169.254.169.254'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'garbage.example': ['not-an-address'],
    localhost: ['127.0.0.1', '::1'],
  };

  it.each([
    'http://127.0.0.1/',
    'http://127.0.0.1:8080/admin',
    'http://localhost/',
    'http://10.0.0.1/',
    'http://10.255.1.2/',
    'http://172.16.0.1/',
    'http://172.31.255.254/',
    'http://192.168.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://100.100.100.200/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fe80::1]/',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[::127.0.0.1]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://0x7f.1/',
    'http://127.1/',
    'http://0xa9fea9fe/',
    'http://internal.example/',
    'http://mixed.example/',
    'http://mixed6.example/',
    'http://metadata.example/',
    'http://mapped.example/',
    'http://garbage.example/',
  ])('refuses %s before any connection', async (url) => {
    const { fetcher, connections } = harness(dns, {});
    const result = await fetcher.fetch({ url, format: 'markdown' });
    expect(result).toEqual({ ok: false, code: 'invalid_parameter', message: expect.stringContaining('url') });
    expect(connections).toEqual([]);
  });

  it.each([
    ['a private address', 'http://10.1.2.3/'],
    ['a metadata address', 'http://169.254.169.254/latest/meta-data/iam/'],
    ['a loopback spelling', 'http://0x7f000001/'],
    ['a mapped IPv6 address', 'http://[::ffff:192.168.0.1]/'],
    ['a name resolving privately', 'http://internal.example/'],
    ['a name resolving to one public and one private address', 'http://mixed.example/'],
    ['a relative location on a refused port', '//example.com:22/'],
    ['another scheme', 'file:///etc/passwd'],
  ])('refuses a redirect to %s, connecting only to the first, checked address', async (_name, location) => {
    const { fetcher, connections } = harness(dns, { 'https://example.com/start': redirect(location) });
    const result = await fetcher.fetch({ url: 'https://example.com/start', format: 'markdown' });
    expect(result).toEqual({ ok: false, code: 'invalid_parameter', message: expect.stringContaining('url') });
    expect(connections.map((c) => c.address)).toEqual([PUBLIC]);
  });

  it('says a refusal after a redirect came from the redirect', async () => {
    const { fetcher } = harness(dns, { 'https://example.com/start': redirect('http://internal.example/') });
    expect(await fetcher.fetch({ url: 'https://example.com/start', format: 'markdown' })).toEqual({
      ok: false,
      code: 'invalid_parameter',
      message: 'url redirected to an address that is refused: url must point to a public address; its host is a private, local or reserved address.',
    });
  });

  it('refuses a redirect chain longer than 5, after 6 connections to the checked address', async () => {
    const pages: Record<string, () => Response> = {};
    for (let hop = 0; hop < 7; hop += 1) pages[`https://example.com/${hop}`] = redirect(`/${hop + 1}`, 301);
    const { fetcher, connections } = harness(dns, pages);
    const result = await fetcher.fetch({ url: 'https://example.com/0', format: 'markdown' });
    expect(result).toEqual({ ok: false, code: 'invalid_parameter', message: 'url redirected more than 5 times.' });
    expect(connections.map((c) => c.url)).toEqual([0, 1, 2, 3, 4, 5].map((hop) => `https://example.com/${hop}`));
  });

  it('follows 5 redirects (relative and absolute), checking every hop, and reports the final url', async () => {
    const pages: Record<string, () => Response> = {
      'http://example.com/a': redirect('/b', 301),
      'http://example.com/b': redirect('https://example.com/c', 307),
      'https://example.com/c': redirect('d?x=1', 308),
      'https://example.com/d?x=1': redirect('//example.com/e', 303),
      'https://example.com/e': redirect('https://example.com/f'),
      'https://example.com/f': html('<title>F</title><p>done</p>'),
    };
    const { fetcher, lookups, connections } = harness(dns, pages);
    const result = await fetcher.fetch({ url: 'http://EXAMPLE.com/a#frag', format: 'markdown' });
    expect(result).toEqual({
      ok: true,
      page: {
        object: 'page',
        url: 'http://example.com/a',
        final_url: 'https://example.com/f',
        status: 200,
        title: 'F',
        content_type: 'text/html',
        content: 'done',
        truncated: false,
      },
    });
    expect(lookups).toEqual(Array(6).fill('example.com'));
    expect(connections.every((c) => c.address === PUBLIC)).toBe(true);
  });

  it.each([
    ['ftp://example.com/file', 'url must use http or https.'],
    ['javascript:alert(1)', 'url must use http or https.'],
    ['http://user:pass@example.com/', 'url must not contain credentials.'],
    ['http://example.com:22/', 'url must use port 80, 443 or a port from 1024 to 65535.'],
    ['/relative', 'url must be an absolute http or https URL.'],
    ['http://', 'url must be an absolute http or https URL.'],
    [`https://example.com/${'a'.repeat(8200)}`, 'url must be at most 8192 characters.'],
  ])('refuses the address %s', async (url, message) => {
    const { fetcher, lookups, connections } = harness(dns, {});
    expect(await fetcher.fetch({ url, format: 'markdown' })).toEqual({ ok: false, code: 'invalid_parameter', message });
    expect(lookups).toEqual([]);
    expect(connections).toEqual([]);
  });

  it('admits a non-public address only through the test-only allowAddress', async () => {
    const { fetcher, connections } = harness(
      {},
      { 'http://127.0.0.1:8080/': html('<p>local</p>') },
      {
        allowAddress: (address) => address === '127.0.0.1',
      },
    );
    const result = await fetcher.fetch({ url: 'http://127.1:8080/', format: 'markdown' });
    expect(result.ok && result.page.content).toBe('local');
    expect(connections.map((c) => c.address)).toEqual(['127.0.0.1']);
    const other = await fetcher.fetch({ url: 'http://10.0.0.1/', format: 'markdown' });
    expect(other.ok).toBe(false);
  });
});

describe('createPageFetcher: precheck (no I/O, before the gateway holds credit)', () => {
  const NOT_PUBLIC = 'url must point to a public address; its host is a private, local or reserved address.';

  it.each([
    ['http://127.0.0.1/', NOT_PUBLIC],
    ['http://2130706433/', NOT_PUBLIC],
    ['http://0177.0.0.1/', NOT_PUBLIC],
    ['http://0x7f.1/', NOT_PUBLIC],
    ['http://[::ffff:127.0.0.1]/', NOT_PUBLIC],
    ['http://[fe80::1]/', NOT_PUBLIC],
    ['http://169.254.169.254/latest/meta-data/', NOT_PUBLIC],
    ['ftp://example.com/', 'url must use http or https.'],
    ['http://user:pw@example.com/', 'url must not contain credentials.'],
    ['http://example.com:22/', 'url must use port 80, 443 or a port from 1024 to 65535.'],
  ])('refuses %s on its spelling', (url, message) => {
    const { fetcher, lookups, connections } = harness({}, {});
    expect(fetcher.precheck!(url)).toEqual({ ok: false, code: 'invalid_parameter', message });
    expect(lookups).toEqual([]);
    expect(connections).toEqual([]);
  });

  it('passes names (checked after DNS by fetch), public literals and allowed addresses, without a lookup', () => {
    const { fetcher, lookups } = harness({}, {}, { allowAddress: (address) => address === '127.0.0.1' });
    expect(fetcher.precheck!('http://internal.example/')).toEqual({ ok: true });
    expect(fetcher.precheck!(`http://${PUBLIC}/`)).toEqual({ ok: true });
    expect(fetcher.precheck!('http://127.1:8080/')).toEqual({ ok: true });
    expect(fetcher.precheck!('http://10.0.0.1/')).toEqual({ ok: false, code: 'invalid_parameter', message: NOT_PUBLIC });
    expect(lookups).toEqual([]);
  });
});

describe('createPageFetcher: content, caps and failures', () => {
  const dns = { 'example.com': [PUBLIC] };
  // A string body would get `text/plain` from Response itself: send bytes when there is no type.
  const body =
    (text: string | Uint8Array<ArrayBuffer>, type: string | null, status = 200) =>
    () =>
      new Response(typeof text === 'string' ? new TextEncoder().encode(text) : text, {
        status,
        headers: type === null ? {} : { 'content-type': type },
      });

  it('sends the User-Agent and Accept headers to the checked address', async () => {
    const { fetcher, connections } = harness(dns, { 'https://example.com/': body('hi', 'text/plain') }, { userAgent: 'test-agent/1' });
    await fetcher.fetch({ url: 'https://example.com/', format: 'markdown' });
    expect(connections).toEqual([
      {
        url: 'https://example.com/',
        address: PUBLIC,
        headers: { 'user-agent': 'test-agent/1', accept: expect.stringMatching(/^text\/html, /) },
      },
    ]);
  });

  it.each([
    ['text/plain; charset=utf-8', 'text/plain', 'plain *text*'],
    ['text/markdown', 'text/markdown', '# Heading\n\n*kept*'],
    ['application/json', 'application/json', '{"a":[1,2]}'],
    ['application/ld+json', 'application/ld+json', '{"@id":"x"}'],
    ['application/rss+xml', 'application/rss+xml', '<rss><item/></rss>'],
    ['text/csv', 'text/csv', 'a,b\n1,2'],
  ])('passes %s through as it is, whatever the format', async (header, type, text) => {
    const { fetcher } = harness(dns, { 'https://example.com/': body(text, header) });
    for (const format of ['markdown', 'text'] as const) {
      const result = await fetcher.fetch({ url: 'https://example.com/', format });
      expect(result).toEqual({
        ok: true,
        page: {
          object: 'page',
          url: 'https://example.com/',
          final_url: 'https://example.com/',
          status: 200,
          title: null,
          content_type: type,
          content: text,
          truncated: false,
        },
      });
    }
  });

  it.each(['image/png', 'application/pdf', 'application/octet-stream', 'video/mp4'])(
    'refuses %s with invalid_parameter without reading the body',
    async (type) => {
      let pulled = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += 1;
          controller.enqueue(new Uint8Array(1024));
        },
      });
      const { fetcher } = harness(dns, { 'https://example.com/x': () => new Response(stream, { headers: { 'content-type': type } }) });
      expect(await fetcher.fetch({ url: 'https://example.com/x', format: 'markdown' })).toEqual({
        ok: false,
        code: 'invalid_parameter',
        message: `url points to content of type ${type}; fetch reads HTML, text, markdown, JSON and XML.`,
      });
      expect(pulled).toBeLessThanOrEqual(1);
    },
  );

  it('sniffs a reply without Content-Type: HTML, text, or binary refused', async () => {
    const { fetcher } = harness(dns, {
      'https://example.com/h': body('  <!DOCTYPE html><title>S</title><p>x</p>', null),
      'https://example.com/t': body('just text', null),
      'https://example.com/b': body(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]), null),
    });
    const h = await fetcher.fetch({ url: 'https://example.com/h', format: 'markdown' });
    expect(h.ok && [h.page.content_type, h.page.title, h.page.content]).toEqual(['text/html', 'S', 'x']);
    const t = await fetcher.fetch({ url: 'https://example.com/t', format: 'markdown' });
    expect(t.ok && [t.page.content_type, t.page.content]).toEqual(['text/plain', 'just text']);
    const b = await fetcher.fetch({ url: 'https://example.com/b', format: 'markdown' });
    expect(b).toEqual({ ok: false, code: 'invalid_parameter', message: expect.stringMatching(/^url points to binary content/) });
  });

  it('returns a non-2xx page with its status', async () => {
    const { fetcher } = harness(dns, { 'https://example.com/gone': html('<title>Not found</title><h1>404</h1>', { status: 404 }) });
    const result = await fetcher.fetch({ url: 'https://example.com/gone', format: 'markdown' });
    expect(result.ok && [result.page.status, result.page.title, result.page.content]).toEqual([404, 'Not found', '# 404']);
  });

  it('returns a redirect status without Location as a page', async () => {
    const { fetcher } = harness(dns, { 'https://example.com/r': body('moved', 'text/plain', 302) });
    const result = await fetcher.fetch({ url: 'https://example.com/r', format: 'text' });
    expect(result.ok && [result.page.status, result.page.content]).toEqual([302, 'moved']);
  });

  it('cuts the body at maxBytes, cancels the rest, and drops a cut character', async () => {
    let cancelled = false;
    let pulls = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        controller.enqueue(new TextEncoder().encode('aé'.repeat(4)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const { fetcher } = harness(
      dns,
      { 'https://example.com/big': () => new Response(stream, { headers: { 'content-type': 'text/plain' } }) },
      { maxBytes: 16 },
    );
    const result = await fetcher.fetch({ url: 'https://example.com/big', format: 'markdown' });
    // 12 bytes per chunk: the cap falls inside the second chunk's second "é" (bytes 15-16 of 16 kept: 'a' + 'é' + 'a' + first byte of 'é').
    expect(result.ok && [result.page.content, result.page.truncated]).toEqual(['aéaéaéaéaéa', true]);
    expect(cancelled).toBe(true);
    expect(pulls).toBeLessThanOrEqual(3);
  });

  it('decodes by the declared charset and by an HTML meta charset', async () => {
    const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]); // "café" in ISO-8859-1
    const meta = new Uint8Array([...new TextEncoder().encode('<meta charset="iso-8859-1"><p>'), ...latin1]);
    const { fetcher } = harness(dns, {
      'https://example.com/l': body(latin1, 'text/plain; charset=ISO-8859-1'),
      'https://example.com/m': body(meta, 'text/html'),
    });
    const l = await fetcher.fetch({ url: 'https://example.com/l', format: 'text' });
    const m = await fetcher.fetch({ url: 'https://example.com/m', format: 'text' });
    expect([l.ok && l.page.content, m.ok && m.page.content]).toEqual(['café', 'café']);
  });

  it('maps a refused connection to upstream_unavailable and an unknown host too', async () => {
    const { fetcher } = harness({ 'example.com': [PUBLIC] }, {});
    expect(await fetcher.fetch({ url: 'https://example.com/', format: 'markdown' })).toEqual({
      ok: false,
      code: 'upstream_unavailable',
      message: 'The page could not be reached.',
    });
    expect(await fetcher.fetch({ url: 'https://nowhere.example/', format: 'markdown' })).toEqual({
      ok: false,
      code: 'upstream_unavailable',
      message: 'The host of url could not be resolved.',
    });
  });

  it('maps a body that fails midway to upstream_error', async () => {
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('socket hang up'));
      },
    });
    const { fetcher } = harness(dns, { 'https://example.com/': () => new Response(stream, { headers: { 'content-type': 'text/html' } }) });
    expect(await fetcher.fetch({ url: 'https://example.com/', format: 'markdown' })).toEqual({
      ok: false,
      code: 'upstream_error',
      message: 'The page failed while its body was read.',
    });
  });

  it('stops a transport that never answers at the time cap', async () => {
    let signal: AbortSignal | undefined;
    const fetcher = createPageFetcher({
      resolve: async () => [PUBLIC],
      transport: (request) => {
        signal = request.signal;
        return new Promise<Response>(() => undefined);
      },
      timeoutMs: 5,
    });
    expect(await fetcher.fetch({ url: 'https://example.com/', format: 'markdown' })).toEqual({
      ok: false,
      code: 'upstream_error',
      message: 'The page did not load within 1 s.',
    });
    expect(signal?.aborted).toBe(true);
  });

  it('stops a body that stalls at the time cap, and a resolver that hangs', async () => {
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([65]));
      },
    });
    const slowBody = createPageFetcher({
      resolve: async () => [PUBLIC],
      transport: async () => new Response(stalled, { headers: { 'content-type': 'text/plain' } }),
      timeoutMs: 5,
    });
    const slowDns = createPageFetcher({ resolve: () => new Promise(() => undefined), transport: async () => new Response('x'), timeoutMs: 5 });
    const expected = { ok: false, code: 'upstream_error', message: 'The page did not load within 1 s.' };
    expect(await slowBody.fetch({ url: 'https://example.com/', format: 'markdown' })).toEqual(expected);
    expect(await slowDns.fetch({ url: 'https://example.com/', format: 'markdown' })).toEqual(expected);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const fetcher = createPageFetcher({
      resolve: async () => [PUBLIC],
      transport: () => {
        controller.abort();
        return new Promise<Response>(() => undefined);
      },
    });
    expect(await fetcher.fetch({ url: 'https://example.com/', format: 'markdown' }, { signal: controller.signal })).toEqual({
      ok: false,
      code: 'upstream_error',
      message: 'The fetch was cancelled.',
    });
  });
});
