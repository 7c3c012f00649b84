import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { getEventListeners } from 'node:events';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeListener, type FetchHandler, type NodeListenerErrorPhase, type NodeListenerOptions, probeSourceSlot } from './node-listener';
import { listenOnLoopback } from '../test/listen';
import { parse, serveListener, sleep, until } from '../test/wire';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Serves `fetch` through createNodeListener on a loopback port, counting the socket writes of each connection. */
const serve = (fetch: FetchHandler, options?: NodeListenerOptions) => serveListener(fetch, cleanups, options);

/** A raw connection: send bytes, collect what comes back. */
function rawClient(port: number): Promise<{ socket: Socket; text: () => string; closed: Promise<void> }> {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, text: () => text, closed }));
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('data', (data) => (text += data.toString('latin1')));
    socket.on('error', () => {});
    cleanups.push(() => socket.destroy());
  });
}

/** One whole raw exchange on a fresh connection (the request says Connection: close). */
async function raw(port: number, bytes: string): Promise<string> {
  const client = await rawClient(port);
  client.socket.write(bytes);
  await client.closed;
  return client.text();
}

describe('createNodeListener: the request', () => {
  it('has the method, the absolute URL from Host, every header (duplicates appended) and the body', async () => {
    let seen: { method: string; url: string; dup: string | null; type: string | null; body: string; duplex: unknown } | undefined;
    const { port } = await serve(async (request) => {
      seen = {
        method: request.method,
        url: request.url,
        dup: request.headers.get('x-dup'),
        type: request.headers.get('content-type'),
        body: await request.text(),
        duplex: (request as Request & { duplex?: string }).duplex,
      };
      return new Response('ok');
    });
    const reply = parse(
      await raw(
        port,
        'POST /v1/echo?q=1 HTTP/1.1\r\nHost: example.test:8080\r\nX-Dup: a\r\nX-Dup: b\r\nContent-Type: application/json\r\n' +
          'Content-Length: 11\r\nConnection: close\r\n\r\n{"héllo":1}'.replace('11', String(Buffer.byteLength('{"héllo":1}'))),
      ),
    );
    expect(reply.status).toBe(200);
    expect(seen).toEqual({
      method: 'POST',
      url: 'http://example.test:8080/v1/echo?q=1',
      dup: 'a, b',
      type: 'application/json',
      body: '{"héllo":1}',
      duplex: 'half',
    });
  });

  it('a chunked body arrives whole, in order', async () => {
    let body = '';
    const { port } = await serve(async (request) => {
      body = await request.text();
      return new Response(null, { status: 204 });
    });
    const reply = parse(
      await raw(port, 'PUT /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n'),
    );
    expect(reply.status).toBe(204);
    expect(body).toBe('abcdefg');
  });

  it('GET and HEAD have no body', async () => {
    const bodies: (ReadableStream | null)[] = [];
    const { url } = await serve((request) => {
      bodies.push(request.body);
      return new Response('x');
    });
    await (await fetch(url)).text();
    await fetch(url, { method: 'HEAD' });
    expect(bodies).toEqual([null, null]);
  });

  it('without a Host header the URL is on options.hostname; without either the request is a 400 told to onError', async () => {
    let url = '';
    const phases: NodeListenerErrorPhase[] = [];
    const withName = await serve(
      (request) => {
        url = request.url;
        return new Response('ok');
      },
      { hostname: 'gateway.local' },
    );
    Reflect.set(withName.server, 'requireHostHeader', false);
    expect(parse(await raw(withName.port, 'GET /v1/models HTTP/1.0\r\n\r\n')).status).toBe(200);
    expect(url).toBe('http://gateway.local/v1/models');

    const without = await serve(() => new Response('ok'), { onError: (_error, phase) => void phases.push(phase) });
    Reflect.set(without.server, 'requireHostHeader', false);
    const reply = parse(await raw(without.port, 'GET /v1/models HTTP/1.0\r\n\r\n'));
    expect(reply.status).toBe(400);
    expect(reply.body).toBe('Bad Request');
    expect(phases).toEqual(['request']);
  });

  it.each([
    ['an asterisk target', 'OPTIONS * HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'],
    ['a backslash in the path', 'GET /v1\\models HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'],
    ['a Host that is not a host', 'GET /v1/models HTTP/1.1\r\nHost: a/b\r\nConnection: close\r\n\r\n'],
    ['a Host the URL parser refuses (a last label that is a number)', 'GET /v1/models HTTP/1.1\r\nHost: a.1\r\nConnection: close\r\n\r\n'],
    ['an absolute-form target with credentials', 'GET http://user:secret@other.test/a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'],
  ])('%s is the request phase: the Response onError returns, else 400', async (_name, bytes) => {
    let called = 0;
    const errors: unknown[] = [];
    const plain = await serve(() => {
      called++;
      return new Response('ok');
    });
    expect(parse(await raw(plain.port, bytes)).status).toBe(400);
    const answered = await serve(() => new Response('ok'), {
      onError: (error, phase) => {
        errors.push(error);
        return phase === 'request' ? new Response('{"error":"bad target"}', { status: 400, headers: { 'x-mine': '1' } }) : undefined;
      },
    });
    const reply = parse(await raw(answered.port, bytes));
    expect(reply).toMatchObject({ status: 400, body: '{"error":"bad target"}' });
    expect(reply.headers['x-mine']).toBe('1');
    expect(called).toBe(0);
    expect(errors).toHaveLength(1);
  });

  it('TRACE, which a web Request cannot carry, reaches the handler with its method; only making a real Request of it fails, as the handler', async () => {
    const methods: string[] = [];
    const phases: NodeListenerErrorPhase[] = [];
    const { port } = await serve(
      (request) => {
        methods.push(request.method);
        // A router answers it as any method it does not serve; a member only the real Request has throws.
        if (new URL(request.url).pathname === '/served') return new Response('Method Not Allowed', { status: 405 });
        return new Response(new Request(request).method);
      },
      { onError: (_error, phase) => void phases.push(phase) },
    );
    expect(parse(await raw(port, 'TRACE /served HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'))).toMatchObject({ status: 405, body: 'Method Not Allowed' });
    expect(parse(await raw(port, 'TRACE /other HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n')).status).toBe(500);
    expect(methods).toEqual(['TRACE', 'TRACE']);
    expect(phases).toEqual(['handler']);
  });

  it('an absolute-form target is the URL', async () => {
    let url = '';
    const { port } = await serve((request) => {
      url = request.url;
      return new Response('ok');
    });
    await raw(port, 'GET http://other.test/a?b=1 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    expect(url).toBe('http://other.test/a?b=1');
  });

  it('the URL is normalised as a web Request normalises it', async () => {
    let url = '';
    const { port } = await serve((request) => {
      url = request.url;
      return new Response('ok');
    });
    await raw(port, 'GET /a/../b?x="y HTTP/1.1\r\nHost: EXAMPLE.test:80\r\nConnection: close\r\n\r\n');
    expect(url).toBe('http://example.test/b?x=%22y');
  });

  it('reads nothing before the handler reads, and a handler that does not read leaves the socket paused', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let received = 0;
    const { port, incoming } = await serve(async (request) => {
      await gate;
      received = (await request.arrayBuffer()).byteLength;
      return new Response('done');
    });
    const size = 16 * 1024 * 1024;
    const client = await rawClient(port);
    client.socket.write(`POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`);
    const chunk = Buffer.alloc(64 * 1024, 97);
    for (let sent = 0; sent < size; sent += chunk.byteLength) client.socket.write(chunk);
    await until(() => incoming.length === 1);
    await sleep(300);
    const message = incoming[0]!;
    const bytesRead = message.socket?.bytesRead ?? 0;
    // Node's own buffer (16 KiB) and the socket's read-ahead, nowhere near the 16 MiB sent.
    expect(bytesRead).toBeLessThan(1024 * 1024);
    expect(message.readableFlowing).not.toBe(true);
    await sleep(200);
    expect(message.socket?.bytesRead ?? 0).toBe(bytesRead);
    release?.();
    await client.closed;
    expect(received).toBe(size);
    expect(parse(client.text()).body).toBe('done');
  });

  it("aborts the request's signal with an AbortError when the client goes away before the response finished, and cancels the response body", async () => {
    let signal: AbortSignal | undefined;
    let cancelled: unknown = 'not cancelled';
    const { port } = await serve((request) => {
      signal = request.signal;
      return new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
          },
          cancel(reason) {
            cancelled = reason;
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    });
    const client = await rawClient(port);
    client.socket.write('GET /stream HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => client.text().includes('data: 1'));
    expect(signal?.aborted).toBe(false);
    client.socket.destroy();
    await until(() => signal?.aborted === true);
    expect(signal?.reason).toBeInstanceOf(DOMException);
    expect((signal!.reason as DOMException).name).toBe('AbortError');
    await until(() => cancelled !== 'not cancelled');
    expect((cancelled as DOMException).name).toBe('AbortError');
  });

  it('does not abort the signal of a request whose response finished', async () => {
    let signal: AbortSignal | undefined;
    const { url } = await serve((request) => {
      signal = request.signal;
      return new Response('done');
    });
    expect(await (await fetch(url)).text()).toBe('done');
    await sleep(50);
    expect(signal?.aborted).toBe(false);
  });

  it('a client that leaves mid-upload errors the body the handler reads, and aborts the signal', async () => {
    let failure: unknown;
    let signal: AbortSignal | undefined;
    const { port } = await serve(async (request) => {
      signal = request.signal;
      try {
        await request.arrayBuffer();
      } catch (error) {
        failure = error;
      }
      return new Response('late');
    });
    const client = await rawClient(port);
    client.socket.write('POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\nabc');
    await sleep(50);
    client.socket.destroy();
    await until(() => failure !== undefined && signal?.aborted === true);
    expect(failure).toBeInstanceOf(Error);
  });

  it('a body cancelled half read is drained after the response, so the next request on the connection is served', async () => {
    const { port } = await serve(async (request) => {
      if (request.method === 'POST') {
        const reader = request.body!.getReader();
        await reader.read();
        await reader.cancel();
        return new Response('refused', { status: 413 });
      }
      return new Response('next');
    });
    const client = await rawClient(port);
    const size = 256 * 1024;
    client.socket.write(`POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`);
    client.socket.write(Buffer.alloc(size, 98));
    client.socket.write('GET /after HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    await client.closed;
    expect(client.text()).toContain('refused');
    expect(client.text()).toContain('next');
  });
});

/** A plain node:http server that answers with the method, URL, headers and body it received, as JSON. */
async function echoServer(): Promise<{ port: number; url: string }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.stringify({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString() });
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  const port = await listenOnLoopback(server, cleanups);
  return { port, url: `http://127.0.0.1:${port}` };
}

/** Listeners on the request's signal: a real Request made from it follows it with one. */
const followers = (request: Request): number => getEventListeners(request.signal, 'abort').length;

describe('createNodeListener: a client that leaves', () => {
  it('with a pipelined request queued behind another: both see the abort (the queued reply never closes itself)', async () => {
    const signals: AbortSignal[] = [];
    const { port } = await serve(async (request) => {
      signals.push(request.signal);
      await sleep(2_000);
      return new Response('late');
    });
    const client = await rawClient(port);
    client.socket.write('GET /one HTTP/1.1\r\nHost: h\r\n\r\nGET /two HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => signals.length === 2);
    client.socket.destroy();
    await until(() => signals.every((signal) => signal.aborted));
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
  });
});

describe('createNodeListener: the lightweight request', () => {
  it('is a Request answering method, url, headers, signal and body without making a real one; any other member makes one, once', async () => {
    const seen: Record<string, unknown> = {};
    const { port } = await serve(async (request) => {
      seen.instance = request instanceof Request;
      seen.tag = Object.prototype.toString.call(request);
      seen.method = request.method;
      seen.url = request.url;
      seen.header = request.headers.get('x-dup');
      const { headers, signal, body } = request;
      seen.sameHeaders = request.headers === headers;
      seen.sameSignal = request.signal === signal;
      seen.aborted = request.signal.aborted;
      seen.stream = request.body instanceof ReadableStream;
      seen.sameBody = request.body === body;
      seen.usedBefore = request.bodyUsed;
      seen.text = await new Response(request.body).text();
      seen.usedAfter = request.bodyUsed;
      seen.followersBefore = followers(request);
      seen.members = {
        cache: request.cache,
        credentials: request.credentials,
        destination: request.destination,
        duplex: (request as Request & { duplex?: string }).duplex,
        integrity: request.integrity,
        keepalive: request.keepalive,
        mode: request.mode,
        redirect: request.redirect,
        referrer: request.referrer,
        referrerPolicy: request.referrerPolicy,
      };
      seen.followersAfter = followers(request);
      seen.headersKept = request.headers.get('x-dup');
      seen.usedKept = request.bodyUsed;
      return new Response('ok');
    });
    const reply = parse(await raw(port, 'PUT /v1/x?y=1 HTTP/1.1\r\nHost: h:1\r\nX-Dup: a\r\nX-Dup: b\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc'));
    expect(reply.status).toBe(200);
    expect(seen).toEqual({
      instance: true,
      tag: '[object Request]',
      method: 'PUT',
      url: 'http://h:1/v1/x?y=1',
      header: 'a, b',
      sameHeaders: true,
      sameSignal: true,
      aborted: false,
      stream: true,
      sameBody: true,
      usedBefore: false,
      text: 'abc',
      usedAfter: true,
      followersBefore: 0,
      members: {
        cache: 'default',
        credentials: 'same-origin',
        destination: '',
        duplex: 'half',
        integrity: '',
        keepalive: false,
        mode: 'cors',
        redirect: 'follow',
        referrer: 'about:client',
        referrerPolicy: '',
      },
      followersAfter: 1,
      headersKept: 'a, b',
      usedKept: true,
    });
  });

  it.each([
    ['text', 'a=1&b=2', (request: Request) => request.text()],
    ['json', '{"a":1}', async (request: Request) => JSON.stringify(await request.json())],
    ['arrayBuffer', 'a=1&b=2', async (request: Request) => Buffer.from(await request.arrayBuffer()).toString()],
    ['bytes', 'a=1&b=2', async (request: Request) => Buffer.from(await request.bytes()).toString()],
    [
      'blob',
      'a=1&b=2',
      async (request: Request) => {
        const blob = await request.blob();
        return `${blob.type} ${await blob.text()}`;
      },
    ],
    ['formData', 'a=1&b=2', async (request: Request) => [...(await request.formData()).entries()].join(';')],
  ])('%s() reads the body; afterwards the body says used and a second read is refused', async (name, sent, read) => {
    let result: unknown;
    let after: { used: boolean; locked: boolean | undefined; again: string; forward: string } | undefined;
    const { url } = await serve(async (request) => {
      try {
        result = await read(request);
      } catch (error) {
        result = error;
      }
      const again = await request.text().then(
        () => 'read twice',
        (error: unknown) => (error instanceof TypeError ? 'TypeError' : String(error)),
      );
      let forward = 'forwarded';
      try {
        new Request(request);
      } catch (error) {
        forward = error instanceof TypeError ? 'TypeError' : String(error);
      }
      after = { used: request.bodyUsed, locked: request.body?.locked, again, forward };
      return new Response('ok');
    });
    const type = name === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
    expect((await fetch(url, { method: 'POST', body: sent, headers: { 'content-type': type } })).status).toBe(200);
    const expected: Record<string, unknown> = {
      text: 'a=1&b=2',
      json: '{"a":1}',
      arrayBuffer: 'a=1&b=2',
      bytes: 'a=1&b=2',
      blob: 'application/x-www-form-urlencoded a=1&b=2',
      formData: 'a,1;b,2',
    };
    expect(result).toBe(expected[name]);
    expect(after).toEqual({ used: true, locked: true, again: 'TypeError', forward: 'TypeError' });
  });

  it('a body read through its own reader first: used, and text(), clone() and new Request(it) refuse it as a real Request does', async () => {
    let seen: Record<string, unknown> = {};
    const { url } = await serve(async (request) => {
      const body = request.body!;
      const reader = body.getReader();
      const lockedOnly = { used: request.bodyUsed, text: await request.text().catch((error: unknown) => error instanceof TypeError) };
      await reader.read();
      seen = {
        lockedOnly,
        used: request.bodyUsed,
        sameBody: request.body === body,
        text: await request.text().catch((error: unknown) => error instanceof TypeError),
        clone: (() => {
          try {
            request.clone();
            return 'cloned';
          } catch (error) {
            return error instanceof TypeError;
          }
        })(),
        forward: (() => {
          try {
            new Request(request);
            return 'forwarded';
          } catch (error) {
            return error instanceof TypeError;
          }
        })(),
      };
      return new Response('ok');
    });
    expect((await fetch(url, { method: 'POST', body: 'abc' })).status).toBe(200);
    expect(seen).toEqual({ lockedOnly: { used: false, text: true }, used: true, sameBody: true, text: true, clone: true, forward: true });
  });

  it('clone(): the copy and the request each read the whole body; body is then the kept branch', async () => {
    let seen: unknown;
    const { url } = await serve(async (request) => {
      const first = request.body;
      const copy = request.clone();
      seen = {
        copy: copy instanceof Request,
        branch: request.body !== first && request.body instanceof ReadableStream,
        texts: await Promise.all([copy.text(), request.text()]),
        used: request.bodyUsed,
      };
      return new Response('ok');
    });
    expect((await fetch(url, { method: 'POST', body: 'hello' })).status).toBe(200);
    expect(seen).toEqual({ copy: true, branch: true, texts: ['hello', 'hello'], used: true });
  });

  it('forwarding: new Request(it), new Request(url, it) and fetch(it) carry method, URL, headers (as changed) and body', async () => {
    const upstream = await echoServer();
    const replies: unknown[] = [];
    const { port } = await serve(async (request) => {
      request.headers.set('x-added', 'yes');
      const path = new URL(request.url).pathname;
      if (path === '/copy') {
        const copy = new Request(request);
        replies.push({ method: copy.method, url: copy.url, added: copy.headers.get('x-added'), body: await copy.text(), used: request.bodyUsed });
        return new Response('ok');
      }
      const sent = path === '/init' ? await fetch(`${upstream.url}/init`, request) : await fetch(request);
      const echoed = (await sent.json()) as { method: string; url: string; headers: Record<string, string>; body: string };
      replies.push({ method: echoed.method, url: echoed.url, added: echoed.headers['x-added'], body: echoed.body });
      return new Response('ok');
    });
    const send = (path: string) =>
      raw(port, `PATCH ${path} HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`);
    expect(parse(await send('/copy')).status).toBe(200);
    expect(parse(await send('/init')).status).toBe(200);
    expect(parse(await send('/fetch')).status).toBe(200);
    expect(replies).toEqual([
      { method: 'PATCH', url: `http://127.0.0.1:${upstream.port}/copy`, added: 'yes', body: 'hello', used: true },
      { method: 'PATCH', url: '/init', added: 'yes', body: 'hello' },
      { method: 'PATCH', url: '/fetch', added: 'yes', body: 'hello' },
    ]);
  });

  it('a GET forwards with no body, and its body methods read nothing', async () => {
    let seen: unknown;
    const { url } = await serve(async (request) => {
      const copy = new Request(request);
      seen = { body: copy.body, text: await request.text(), used: request.bodyUsed };
      return new Response('ok');
    });
    expect((await fetch(url)).status).toBe(200);
    expect(seen).toEqual({ body: null, text: '', used: false });
  });

  it('arrayBuffer(), bytes(), text() and json() read the body straight from the message: no real Request, no stream; then used and locked', async () => {
    const seen: Record<string, unknown>[] = [];
    const { port } = await serve(async (request) => {
      const path = new URL(request.url).pathname;
      const read =
        path === '/text'
          ? await request.text()
          : path === '/json'
            ? JSON.stringify(await request.json())
            : path === '/bytes'
              ? Buffer.from(await request.bytes()).toString()
              : Buffer.from(await request.arrayBuffer()).toString();
      const real = followers(request);
      const again = await request.arrayBuffer().then(
        () => 'read twice',
        (error: unknown) => (error instanceof TypeError ? error.message : String(error)),
      );
      seen.push({ path, read, real, used: request.bodyUsed, locked: request.body?.locked, again });
      return new Response('ok');
    });
    const body = '{"a":"é"}';
    const chunked = (path: string) =>
      `POST ${path} HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n4\r\n{"a"\r\n${(Buffer.byteLength(body) - 4).toString(16)}\r\n${body.slice(4)}\r\n0\r\n\r\n`;
    expect(
      parse(await raw(port, `POST /text HTTP/1.1\r\nHost: h\r\nContent-Length: ${Buffer.byteLength(body) + 3}\r\nConnection: close\r\n\r\n\uFEFF${body}`))
        .status,
    ).toBe(200);
    for (const path of ['/json', '/bytes', '/arrayBuffer']) expect(parse(await raw(port, chunked(path))).status).toBe(200);
    const common = { real: 0, used: true, locked: true, again: 'Body is unusable: Body has already been read' };
    expect(seen).toEqual([
      // The BOM is dropped, as a Request's text() drops it.
      { path: '/text', read: body, ...common },
      { path: '/json', read: '{"a":"é"}', ...common },
      { path: '/bytes', read: body, ...common },
      { path: '/arrayBuffer', read: body, ...common },
    ]);
  });

  it('the body read straight: no real Request is made by the read itself; two reads at once, the second refused', async () => {
    let seen: unknown;
    const { url } = await serve(async (request) => {
      const first = request.text();
      const real = followers(request);
      const second = await request.text().then(
        () => 'read twice',
        (error: unknown) => error instanceof TypeError,
      );
      seen = { real, first: await first, second };
      return new Response('ok');
    });
    expect((await fetch(url, { method: 'POST', body: 'abc' })).status).toBe(200);
    expect(seen).toEqual({ real: 0, first: 'abc', second: true });
  });

  it('after body was asked for, text() reads through that stream (a real Request), and an empty body is empty', async () => {
    let seen: unknown;
    const { url } = await serve(async (request) => {
      const body = request.body;
      seen = { text: await request.text(), real: followers(request), sameBody: request.body === body, locked: body?.locked };
      return new Response('ok');
    });
    expect((await fetch(url, { method: 'POST', body: 'abc' })).status).toBe(200);
    expect(seen).toEqual({ text: 'abc', real: 1, sameBody: true, locked: true });
    const { url: empty } = await serve(async (request) => new Response(`[${await request.text()}]`));
    expect(await (await fetch(empty, { method: 'POST', body: '' })).text()).toBe('[]');
  });

  it('a body read straight but left unfinished when the response went out is drained, so the next request on the connection is served', async () => {
    const { port } = await serve(async (request) => {
      if (request.method === 'POST') {
        request.arrayBuffer().catch(() => undefined);
        await sleep(10);
        return new Response('refused', { status: 413 });
      }
      return new Response('next');
    });
    const client = await rawClient(port);
    const size = 256 * 1024;
    client.socket.write(`POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: ${size}\r\n\r\n`);
    client.socket.write(Buffer.alloc(1024, 98));
    await until(() => client.text().includes('refused'));
    client.socket.write(Buffer.alloc(size - 1024, 98));
    client.socket.write('GET /after HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    await client.closed;
    expect(client.text()).toContain('next');
  });

  it('a client that leaves mid-body rejects text() with an error, as the stream would, and nothing is left listening', async () => {
    let failure: unknown;
    const { port, incoming } = await serve(async (request) => {
      try {
        await request.text();
      } catch (error) {
        failure = error;
      }
      return new Response('late');
    });
    const client = await rawClient(port);
    client.socket.write('POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\nabc');
    await until(() => incoming.length === 1);
    await sleep(20);
    client.socket.destroy();
    await until(() => failure !== undefined);
    expect(failure).toBeInstanceOf(Error);
    expect(incoming[0]!.listenerCount('data')).toBe(0);
  });

  it('structuredClone and util.inspect work on it as on a real Request', async () => {
    let seen: { clone: unknown; inspected: string } | undefined;
    const { url } = await serve((request) => {
      seen = { clone: structuredClone(request), inspected: inspect(request) };
      return new Response('ok');
    });
    expect((await fetch(`${url}/x`, { method: 'POST', body: 'a' })).status).toBe(200);
    expect(seen?.clone).toEqual(structuredClone(new Request('http://h/', { method: 'POST', body: 'a' })));
    expect(seen?.inspected).toMatch(/^Request \{/);
    expect(seen?.inspected).toContain(`url: '${url}/x'`);
    expect(seen?.inspected).toContain("method: 'POST'");
  });

  it('a header value a web Headers refuses (a NUL, which only insecureHTTPParser lets through) fails where the headers are first read: the handler', async () => {
    const phases: NodeListenerErrorPhase[] = [];
    let reached = false;
    const listener = createNodeListener(
      (request) => {
        reached = true;
        return new Response(request.headers.get('x-a'));
      },
      { onError: (_error, phase) => void phases.push(phase) },
    );
    const server = createServer({ insecureHTTPParser: true }, listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const reply = parse(await raw((server.address() as AddressInfo).port, 'GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u0000b\r\nConnection: close\r\n\r\n'));
    expect(reply.status).toBe(500);
    expect(reached).toBe(true);
    expect(phases).toEqual(['handler']);
  });

  it('a global Request replaced by a subclass later (as serve() of @hono/node-server does) is followed: instanceof holds with both', async () => {
    const Original = globalThis.Request;
    class Replaced extends Original {}
    globalThis.Request = Replaced;
    cleanups.push(() => {
      globalThis.Request = Original;
    });
    let seen: unknown;
    const { url } = await serve(async (request) => {
      seen = { replaced: request instanceof Replaced, original: request instanceof Original, text: await request.text() };
      return new Response('ok');
    });
    expect((await fetch(url, { method: 'POST', body: 'x' })).status).toBe(200);
    expect(seen).toEqual({ replaced: true, original: true, text: 'x' });
  });
});

describe('createNodeListener: the response', () => {
  it('a body of known length goes out with Content-Length, head and body in one socket write', async () => {
    const served = await serve(() => new Response('{"ok":true}', { status: 201, headers: { 'content-type': 'application/json', 'x-a': '1' } }));
    const reply = parse(await raw(served.port, 'GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'));
    expect(reply.status).toBe(201);
    expect(reply.headers['content-length']).toBe('11');
    expect(reply.headers['transfer-encoding']).toBeUndefined();
    expect(reply.headers['x-a']).toBe('1');
    expect(reply.body).toBe('{"ok":true}');
    expect(served.writes).toEqual([1]);
  });

  it('bytes, an empty body and a null body', async () => {
    const { url } = await serve((request) => {
      const path = new URL(request.url).pathname;
      if (path === '/bytes') return new Response(new Uint8Array([1, 2, 3]));
      if (path === '/empty') return new Response('');
      return new Response(null, { status: 204, headers: { 'x-none': '1' } });
    });
    const bytes = await fetch(`${url}/bytes`);
    expect(bytes.headers.get('content-length')).toBe('3');
    expect([...new Uint8Array(await bytes.arrayBuffer())]).toEqual([1, 2, 3]);
    const empty = await fetch(`${url}/empty`);
    expect(empty.headers.get('content-length')).toBe('0');
    expect(await empty.text()).toBe('');
    const none = await fetch(`${url}/none`);
    expect(none.status).toBe(204);
    expect(none.headers.get('x-none')).toBe('1');
  });

  it('a Response made from a string or bytes is written from that source, its own stream left unread for whoever else holds it', async () => {
    const made: Response[] = [];
    const served = await serve((request) => {
      const path = new URL(request.url).pathname;
      const response = path === '/bytes' ? new Response(new Uint8Array([104, 105])) : new Response('héllo', { headers: { 'content-type': 'text/plain' } });
      made.push(response);
      if (path === '/cloned') made.push(response.clone());
      return response;
    });
    const reply = parse(await raw(served.port, 'GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n'));
    expect(reply.headers['content-length']).toBe('6');
    expect(Buffer.from(reply.body, 'latin1').toString()).toBe('héllo');
    expect(served.writes).toEqual([1]);
    expect(await (await fetch(`${served.url}/bytes`)).text()).toBe('hi');
    expect(await (await fetch(`${served.url}/cloned`)).text()).toBe('héllo');
    // The embedder's responses (and the clone) still read whole elsewhere.
    expect(made.map((response) => response.bodyUsed)).toEqual([false, false, false, false]);
    expect(await Promise.all(made.map((response) => response.text()))).toEqual(['héllo', 'hi', 'héllo', 'héllo']);
  });

  it('a Response of bytes whose clone was read (the tee took the source bytes away) still goes out whole', async () => {
    const served = await serve(async (request) => {
      const path = new URL(request.url).pathname;
      const response = path === '/json' ? Response.json({ a: 1 }) : new Response(new Uint8Array([104, 105]));
      await response.clone().text();
      return response;
    });
    const json = await fetch(`${served.url}/json`);
    expect(json.headers.get('content-length')).toBe('7');
    expect(await json.text()).toBe('{"a":1}');
    expect(await (await fetch(`${served.url}/bytes`)).text()).toBe('hi');
  });

  it('a Response whose body was read, locked or replaced by a subclass is not written from its source: its stream decides, as before', async () => {
    const phases: NodeListenerErrorPhase[] = [];
    class Replaced extends Response {
      override get body(): Response['body'] {
        return new Response('from the stream').body;
      }
    }
    const { url } = await serve(
      async (request) => {
        const path = new URL(request.url).pathname;
        if (path === '/subclass') return new Replaced('from the source');
        const response = new Response('source');
        if (path === '/read') await response.text();
        else response.body!.getReader();
        return response;
      },
      { onError: (_error, phase) => void phases.push(phase) },
    );
    expect(await (await fetch(`${url}/subclass`)).text()).toBe('from the stream');
    expect((await fetch(`${url}/read`)).status).toBe(500);
    expect((await fetch(`${url}/locked`)).status).toBe(500);
    expect(phases).toEqual(['response', 'response']);
  });

  it('the source probe finds the slot of the runtime Response, and none in a Response that keeps its state in private fields', () => {
    expect(typeof probeSourceSlot(Response)).toBe('symbol');
    class Private {
      readonly #body: ReadableStream<Uint8Array> | null;
      constructor(text: string) {
        this.#body = new Response(text).body;
      }
      get body(): ReadableStream<Uint8Array> | null {
        return this.#body;
      }
    }
    expect(probeSourceSlot(Private as unknown as typeof Response)).toBeNull();
  });

  it('several Set-Cookie headers stay several', async () => {
    const { port } = await serve(() => {
      const headers = new Headers();
      headers.append('set-cookie', 'a=1');
      headers.append('set-cookie', 'b=2');
      return new Response('ok', { headers });
    });
    const text = await raw(port, 'GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    expect(text.match(/set-cookie: /gi)).toHaveLength(2);
  });

  it('a streamed body: the first chunk goes with the head, and chunks ready in the same tick go in one write', async () => {
    const encoder = new TextEncoder();
    let next: ((count: number) => void) | undefined;
    const served = await serve(() => {
      let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
      let n = 0;
      next = (count) => {
        for (let index = 0; index < count; index++) controllerRef?.enqueue(encoder.encode(`data: ${n++}\n\n`));
      };
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controllerRef = controller;
            controller.enqueue(encoder.encode('data: first\n\n'));
          },
        }),
        { headers: { 'content-type': 'text/event-stream' } },
      );
    });
    const client = await rawClient(served.port);
    client.socket.write('GET /stream HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => client.text().includes('data: first'));
    await sleep(50);
    expect(served.writes).toEqual([1]); // the head and the first event together
    expect(parse(client.text()).headers['transfer-encoding']).toBe('chunked');
    next?.(5);
    await until(() => client.text().includes('data: 4'));
    await sleep(20);
    expect(served.writes).toEqual([2]); // five events in one write
    next?.(1);
    await until(() => client.text().includes('data: 5'));
    expect(served.writes).toEqual([3]);
  });

  it('a stream whose first chunk does not come at once sends its head after a short moment', async () => {
    let push: (() => void) | undefined;
    const { port } = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              push = () => controller.enqueue(new TextEncoder().encode('late'));
            },
          }),
          { status: 200, headers: { 'content-type': 'text/event-stream', 'x-stream': 'yes' } },
        ),
    );
    const started = Date.now();
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = httpRequest({ port, host: '127.0.0.1', path: '/' }, resolve);
      request.on('error', reject);
      request.end();
      cleanups.push(() => request.destroy());
    });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-stream']).toBe('yes');
    push?.();
    const first = await new Promise<string>((resolve) => response.once('data', (data: Buffer) => resolve(data.toString())));
    expect(first).toBe('late');
  });

  it('back-pressure: a client that stops reading leaves the body un-pulled beyond a small bound; it resumes when the client reads', async () => {
    let pulled = 0;
    const chunk = new Uint8Array(64 * 1024).fill(120);
    const total = 4096; // 256 MiB if nothing held it back
    const { port } = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>(
            {
              pull(controller) {
                pulled++;
                if (pulled > total) controller.close();
                else controller.enqueue(chunk);
              },
            },
            { highWaterMark: 0 },
          ),
        ),
    );
    const client = await rawClient(port);
    client.socket.pause();
    client.socket.write('GET /big HTTP/1.1\r\nHost: h\r\n\r\n');
    await sleep(500);
    const stalled = pulled;
    await sleep(300);
    expect(pulled).toBe(stalled);
    // The socket's buffers on both ends (a few MiB on loopback) and the response's own 16 KiB.
    expect(stalled * chunk.byteLength).toBeLessThan(32 * 1024 * 1024);
    let bytes = 0;
    client.socket.removeAllListeners('data');
    client.socket.on('data', (data: Buffer) => (bytes += data.byteLength));
    client.socket.resume();
    await until(() => pulled > total, 20_000);
    await until(() => bytes >= total * chunk.byteLength, 20_000);
  });

  it('stallTimeoutMs: a client that takes nothing for that long has its connection closed and the body cancelled', async () => {
    let cancelled = false;
    const chunk = new Uint8Array(64 * 1024).fill(120);
    const stream = () =>
      new Response(
        new ReadableStream<Uint8Array>(
          {
            pull: (controller) => controller.enqueue(chunk),
            cancel: () => {
              cancelled = true;
            },
          },
          { highWaterMark: 0 },
        ),
      );
    const { port } = await serve(stream, { stallTimeoutMs: 300 });
    const client = await rawClient(port);
    client.socket.pause();
    client.socket.write('GET /big HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => cancelled, 5_000);
    // What the socket buffered is still there to read; then the connection ends.
    client.socket.resume();
    await client.closed;
    // Without the option the connection stays open however long the client takes nothing.
    cancelled = false;
    const patient = await serve(stream);
    const other = await rawClient(patient.port);
    other.socket.pause();
    other.socket.write('GET /big HTTP/1.1\r\nHost: h\r\n\r\n');
    await sleep(800);
    expect(cancelled).toBe(false);
    expect(other.socket.destroyed).toBe(false);
  });

  it('a handler that throws or rejects is a plain 500 with nothing internal, told to onError', async () => {
    const errors: [unknown, NodeListenerErrorPhase][] = [];
    const { url } = await serve(
      (request) => {
        if (request.url.endsWith('/throw')) throw new Error('secret detail');
        return Promise.reject(new Error('secret detail'));
      },
      { onError: (error, phase) => void errors.push([error, phase]) },
    );
    for (const path of ['/throw', '/reject']) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await response.text()).toBe('Internal Server Error');
    }
    expect(errors.map(([error, phase]) => [(error as Error).message, phase])).toEqual([
      ['secret detail', 'handler'],
      ['secret detail', 'handler'],
    ]);
  });

  it('onError may answer a handler failure with its own Response', async () => {
    const { url } = await serve(
      () => {
        throw new Error('boom');
      },
      { onError: () => new Response('{"error":"busy"}', { status: 503, headers: { 'content-type': 'application/json' } }) },
    );
    const response = await fetch(url);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('{"error":"busy"}');
  });

  it('a body that fails before anything was sent is a 500; after the head went out, the connection is cut', async () => {
    const phases: NodeListenerErrorPhase[] = [];
    const { url, port } = await serve(
      (request) => {
        const late = request.url.endsWith('/late');
        return new Response(
          new ReadableStream<Uint8Array>({
            async start(controller) {
              if (!late) return controller.error(new Error('at once'));
              controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
              await sleep(30);
              controller.error(new Error('later'));
            },
          }),
        );
      },
      { onError: (_error, phase) => void phases.push(phase) },
    );
    const early = await fetch(`${url}/early`);
    expect(early.status).toBe(500);
    expect(await early.text()).toBe('Internal Server Error');
    const client = await rawClient(port);
    client.socket.write('GET /late HTTP/1.1\r\nHost: h\r\n\r\n');
    await client.closed;
    expect(client.text()).toContain('data: 1');
    expect(client.text()).not.toContain('\r\n0\r\n\r\n'); // no chunked terminator: the reply was cut
    expect(phases).toEqual(['response', 'response']);
  });

  it('a head node:http refuses (a control character a web Headers takes) is a 500 told to onError, never a crash', async () => {
    const phases: NodeListenerErrorPhase[] = [];
    let pulls = 0;
    const { url } = await serve(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            // Nothing in the first tick: the head is written off the tick, where nothing else catches.
            async pull(controller) {
              pulls++;
              await sleep(5);
              controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
            },
          }),
          { headers: { 'x-request-id': 'req_1', 'x-bad': 'a\u0001b' } },
        ),
      { onError: (_error, phase) => void phases.push(phase) },
    );
    const reply = await fetch(url);
    expect(reply.status).toBe(500);
    expect(reply.headers.get('x-request-id')).toBeNull();
    expect(await reply.text()).toBe('Internal Server Error');
    expect(phases).toEqual(['response']);
    // The body was stopped: no endless pulling of a response that can never be sent.
    const seen = pulls;
    await sleep(20);
    expect(pulls).toBe(seen);
    // The server still serves.
    expect((await fetch(url)).status).toBe(500);
  });

  it('keep-alive: several requests on one connection, each reply whole', async () => {
    const { port, writes } = await serve(async (request) => new Response(`echo ${await request.text()}`));
    const client = await rawClient(port);
    client.socket.write('POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n1');
    await until(() => client.text().includes('echo 1'));
    client.socket.write('POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nConnection: close\r\n\r\n2');
    await client.closed;
    expect(client.text().match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(client.text()).toContain('echo 2');
    expect(writes).toEqual([2]);
  });
});
