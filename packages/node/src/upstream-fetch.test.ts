import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { bodyReader } from '@tollgate/core';
import { ProviderError, openaiCompatible } from '@tollgate/providers';
import { fakeOpenAI } from '@tollgate/testing';
import { listen } from '@tollgate/testing/server';
import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamFetch, type UpstreamFetch } from './upstream-fetch';
import { lightResponsesWork, UpstreamResponse } from './upstream-response';
import { listenOnLoopback } from '../test/listen';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; server: Server; sockets: Set<Socket> }> {
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listenOnLoopback(server, cleanups);
  return { url: `http://127.0.0.1:${port}`, server, sockets };
}

function upstream(): UpstreamFetch {
  const created = createUpstreamFetch();
  cleanups.push(() => created.close());
  return created;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

const chatRequest = { model: 'm', messages: [{ role: 'user' as const, content: 'Tell me three words' }], stream: false, max_completion_tokens: 50 };

describe('createUpstreamFetch', () => {
  it('sends method, headers and body and returns status, headers and body', async () => {
    const { url } = await serve(async (request, response) => {
      const body = await readBody(request);
      response.writeHead(201, 'Made', {
        'content-type': 'application/json',
        'x-seen': `${request.method} ${request.url} ${request.headers['x-org']} ${request.headers['content-length']}`,
      });
      response.end(JSON.stringify({ body }));
    });
    const response = await upstream().fetch(`${url}/v1/echo?q=1`, { method: 'POST', headers: { 'X-Org': 'tollgate' }, body: '{"héllo":1}' });
    expect(response.status).toBe(201);
    expect(response.statusText).toBe('Made');
    expect(response.ok).toBe(true);
    expect(response.headers.get('x-seen')).toBe('POST /v1/echo?q=1 tollgate 12');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ body: '{"héllo":1}' });
  });

  it('sends each call to its own URL, however many URLs it has seen (each is parsed once, in a bounded cache)', async () => {
    const { url } = await serve((request, response) => response.end(request.url));
    const { fetch } = upstream();
    // More URLs than the cache keeps, then the first ones again, and a URL object.
    const paths = [...Array.from({ length: 300 }, (_, index) => `/v1/p${index}?q=${index}`), '/v1/p0?q=0', '/v1/p1?q=1'];
    for (const path of paths) expect(await (await fetch(`${url}${path}`)).text()).toBe(path);
    expect(await (await fetch(new URL(`${url}/v1/object?x=1`))).text()).toBe('/v1/object?x=1');
    // Not a URL: rejected as the global fetch rejects it, never thrown synchronously.
    await expect(Promise.resolve().then(() => fetch('not a url'))).rejects.toThrow(TypeError);
  });

  it('reuses one pooled connection for sequential calls', async () => {
    const { url, server } = await serve((_request, response) => response.end('ok'));
    let connections = 0;
    server.on('connection', () => connections++);
    const { fetch } = upstream();
    for (let index = 0; index < 3; index++) expect(await (await fetch(`${url}/`, { method: 'POST', body: 'x' })).text()).toBe('ok');
    expect(connections).toBe(1);
  });

  it('gives a 204 a null body and decodes a gzip reply', async () => {
    const { url } = await serve((request, response) => {
      if (request.url === '/empty') return void response.writeHead(204).end();
      response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('unzipped text'));
    });
    const { fetch } = upstream();
    const empty = await fetch(`${url}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    expect(await (await fetch(`${url}/zip`, { headers: { 'accept-encoding': 'gzip' } })).text()).toBe('unzipped text');
  });

  it.each([
    ['its body stream', (response: Response) => response.body!.getReader()],
    ['its own reader (bodyReader: no web stream, as the providers read it)', (response: Response) => bodyReader(response)!],
  ])('keeps backpressure read through %s: an unread body stops the upstream writer, reading it all delivers every byte', async (_name, readerOf) => {
    const chunk = Buffer.alloc(64 * 1024, 97);
    const total = 1024; // 64 MiB if nothing pushed back
    let written = 0;
    let blocked: () => void = () => undefined;
    const isBlocked = new Promise<void>((resolve) => (blocked = resolve));
    const { url } = await serve((_request, response) => {
      response.writeHead(200);
      const write = () => {
        while (written < total) {
          written++;
          if (!response.write(chunk)) {
            blocked();
            return void response.once('drain', write);
          }
        }
        response.end();
      };
      write();
    });
    const response = await upstream().fetch(`${url}/big`);
    const reader = readerOf(response);
    const first = await reader.read();
    expect(first.value!.byteLength).toBeGreaterThan(0);
    await isBlocked;
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Only socket and stream buffers' worth went out (a few MiB at most), not the 64 MiB.
    expect(written).toBeLessThan(total / 4);
    let bytes = first.value!.byteLength;
    for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.byteLength;
    expect(bytes).toBe(total * chunk.length);
    expect(written).toBe(total);
  });

  it('abort mid-body errors the body with the reason and closes the socket', async () => {
    let serverSocketClosed!: Promise<void>;
    const { url } = await serve((request, response) => {
      serverSocketClosed = new Promise((resolve) => request.socket.on('close', () => resolve()));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    });
    const controller = new AbortController();
    const response = await upstream().fetch(`${url}/stream`, { signal: controller.signal });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    const reason = new Error('client left');
    controller.abort(reason);
    await expect(reader.read()).rejects.toBe(reason);
    await serverSocketClosed;
  });

  it('cancelling the body closes the socket; an already aborted signal rejects before connecting', async () => {
    let requests = 0;
    let serverSocketClosed!: Promise<void>;
    const { url } = await serve((request, response) => {
      requests++;
      serverSocketClosed = new Promise((resolve) => request.socket.on('close', () => resolve()));
      response.writeHead(200);
      response.write('partial');
    });
    const { fetch } = upstream();
    const response = await fetch(`${url}/`);
    await response.body!.cancel();
    await serverSocketClosed;
    const aborted = AbortSignal.abort(new Error('gone'));
    await expect(fetch(`${url}/`, { signal: aborted })).rejects.toThrow('gone');
    expect(requests).toBe(1);
  });

  it('cancelling a body whose bytes all arrived keeps the connection for the next call', async () => {
    const { url, server } = await serve((_request, response) => response.end('data: [DONE]\n\n'));
    let connections = 0;
    server.on('connection', () => connections++);
    const { fetch } = upstream();
    for (let index = 0; index < 3; index++) {
      const reader = (await fetch(`${url}/`, { method: 'POST', body: '{}' })).body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: [DONE]\n\n');
      await reader.cancel();
      // The socket goes back to the pool when the reply's end is emitted, a tick later.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(connections).toBe(1);
  });

  it('a body cut by the upstream errors with TypeError terminated', async () => {
    const { url } = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('only part', () => response.socket!.destroy());
    });
    const response = await upstream().fetch(`${url}/`);
    const error = await response.text().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('terminated');
  });

  it('a refused connection rejects like undici (fetch failed, cause ECONNREFUSED) and maps to upstream_unavailable', async () => {
    const { url, server } = await serve(() => undefined);
    await new Promise((resolve) => server.close(resolve));
    const { fetch } = upstream();
    const error = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{}' }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('fetch failed');
    expect(((error as Error).cause as { code: string }).code).toBe('ECONNREFUSED');
    const provider = openaiCompatible({ baseURL: `${url}/v1`, apiKey: 'k', fetch });
    const mapped = await provider.chat!(chatRequest, { upstream: 'gpt-4o-mini' }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(mapped).toBeInstanceOf(ProviderError);
    expect((mapped as ProviderError).code).toBe('upstream_unavailable');
    expect((mapped as ProviderError).accepted).toBe(false);
  });

  it('lets the request body go once it was sent, while the reply still streams', async () => {
    let received = 0;
    let release!: () => void;
    const { url } = await serve((request, response) => {
      request.on('data', (part: Buffer) => (received += part.byteLength));
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: first\n\n');
        release = () => response.end('data: last\n\n');
      });
    });
    const { fetch } = upstream();
    let body: Uint8Array<ArrayBuffer> | undefined = new Uint8Array(1024 * 1024).fill(120);
    const sent = new WeakRef(body);
    const response = await fetch(`${url}/stream`, { method: 'POST', body });
    body = undefined;
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    expect(received).toBe(1024 * 1024);
    // The reply is still open: nothing but the call's own objects could keep the body now.
    await new Promise((resolve) => setImmediate(resolve));
    setFlagsFromString('--expose-gc');
    (runInNewContext('gc') as () => void)();
    expect(sent.deref()).toBeUndefined();
    release();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: last\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('serves openaiCompatible chat and streams from a loopback upstream', async () => {
    const fake = fakeOpenAI({ apiKey: 'k', reply: 'one two three' });
    const server = await listen(fake.handle);
    cleanups.push(() => server.close());
    const provider = openaiCompatible({ baseURL: `${server.url}/v1`, apiKey: 'k', fetch: upstream().fetch });
    const completion = await provider.chat!(chatRequest, { upstream: 'gpt-4o-mini' });
    expect(completion.choices[0]!.message.content).toBe('one two three');
    const stream = await provider.chatStream!({ ...chatRequest, stream: true, stream_options: { include_usage: true } }, { upstream: 'gpt-4o-mini' });
    let text = '';
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += read.value.choices[0]?.delta.content ?? '';
    expect(text).toBe('one two three');
    expect(fake.requests[1]!.headers.authorization).toBe('Bearer k');
  });
});

describe('the reply as a lightweight Response (UpstreamResponse)', () => {
  async function reply(handler: (request: IncomingMessage, response: ServerResponse) => void, init?: RequestInit): Promise<Response> {
    const { url } = await serve(handler);
    return upstream().fetch(`${url}/`, init);
  }

  const json = (response: ServerResponse) =>
    response.writeHead(200, 'Fine', { 'content-type': 'application/json', 'x-twice': ['a', 'b'] }).end('{"a":[1,"é"]}');

  it('answers status, statusText, ok, headers, body and bodyUsed itself and is instanceof Response', async () => {
    const response = await reply((_request, res) => json(res));
    expect(response).toBeInstanceOf(Response);
    expect(response).toBeInstanceOf(UpstreamResponse);
    expect(lightResponsesWork()).toBe(true);
    expect([response.status, response.statusText, response.ok]).toEqual([200, 'Fine', true]);
    expect(response.headers).toBeInstanceOf(Headers);
    expect(response.headers).toBe(response.headers);
    expect(response.headers.get('x-twice')).toBe('a, b');
    expect(response.bodyUsed).toBe(false);
    const body = response.body!;
    expect(body).toBe(response.body);
    expect(await new Response(body).text()).toBe('{"a":[1,"é"]}');
    expect(response.bodyUsed).toBe(true);
    const missing = await reply((_request, res) => res.writeHead(404, 'Nope').end('x'));
    expect([missing.status, missing.statusText, missing.ok]).toEqual([404, 'Nope', false]);
    expect(await missing.text()).toBe('x');
  });

  it('reads json(), text(), arrayBuffer() and bytes() without a web stream, each a copy of its own', async () => {
    const handler = (_request: IncomingMessage, res: ServerResponse) => json(res);
    expect(await (await reply(handler)).json()).toEqual({ a: [1, 'é'] });
    expect(await (await reply(handler)).text()).toBe('{"a":[1,"é"]}');
    const buffer = await (await reply(handler)).arrayBuffer();
    expect(buffer).toBeInstanceOf(ArrayBuffer);
    expect(Buffer.from(buffer).toString()).toBe('{"a":[1,"é"]}');
    expect(buffer.byteLength).toBe(14);
    const bytes = await (await reply(handler)).bytes();
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(bytes.buffer.byteLength).toBe(14);
    expect(new TextDecoder().decode(bytes)).toBe('{"a":[1,"é"]}');
    // Many chunks over time, a leading BOM dropped as undici's text() drops it.
    const chunked = await reply((_request, res) => {
      res.writeHead(200);
      res.write(Buffer.from([0xef, 0xbb, 0xbf]));
      setTimeout(() => res.write('{"b":'), 5);
      setTimeout(() => res.end('2}'), 10);
    });
    expect(await chunked.json()).toEqual({ b: 2 });
    const invalid = await reply((_request, res) => res.end('not json'));
    await expect(invalid.json()).rejects.toBeInstanceOf(SyntaxError);
  });

  it('a body read once is used: a second read rejects as undici does, body is a disturbed stream, clone() throws', async () => {
    const response = await reply((_request, res) => json(res));
    expect(await response.text()).toBe('{"a":[1,"é"]}');
    expect(response.bodyUsed).toBe(true);
    const second = await response.json().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(second).toBeInstanceOf(TypeError);
    expect((second as Error).message).toBe('Body is unusable: Body has already been read');
    const body = response.body!;
    expect(body).toBeInstanceOf(ReadableStream);
    expect(() => new Response(body)).toThrow(TypeError);
    expect(() => response.clone()).toThrow(TypeError);
    await expect(response.arrayBuffer()).rejects.toThrow('Body is unusable');
    // Two reads at once: the second is refused while the first still reads.
    const twice = await reply((_request, res) => {
      res.writeHead(200);
      setTimeout(() => res.end('late'), 10);
    });
    const first = twice.text();
    await expect(twice.bytes()).rejects.toThrow('Body is unusable');
    expect(await first).toBe('late');
    // A body taken by a reader cannot be read again either.
    const locked = await reply((_request, res) => json(res));
    locked.body!.getReader();
    await expect(locked.text()).rejects.toThrow('Body is unusable');
  });

  it('clone(), blob(), type, url and redirected make a real Response once, sharing the body', async () => {
    const response = await reply((_request, res) => json(res));
    const headers = response.headers;
    expect(response.type).toBe('default');
    expect(response.url).toBe('');
    expect(response.redirected).toBe(false);
    const copy = response.clone();
    expect(copy.status).toBe(200);
    expect(copy.headers.get('x-twice')).toBe('a, b');
    expect(response.headers).toBe(headers);
    expect(await copy.text()).toBe('{"a":[1,"é"]}');
    expect(response.bodyUsed).toBe(false);
    expect(await response.json()).toEqual({ a: [1, 'é'] });
    expect(response.bodyUsed).toBe(true);
    const blob = await (await reply((_request, res) => json(res))).blob();
    expect(await blob.text()).toBe('{"a":[1,"é"]}');
    // Undici's own members, called on it, answer through the real Response.
    const direct = await reply((_request, res) => json(res));
    expect(Reflect.apply(Response.prototype.text, direct, [])).toBeInstanceOf(Promise);
    expect(direct.bodyUsed).toBe(true);
  });

  it('a body cut mid-way rejects every read with TypeError terminated, read before or after the cut', async () => {
    const cut = (_request: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('only part', () => res.socket!.destroy());
    };
    for (const read of ['json', 'text', 'arrayBuffer', 'bytes'] as const) {
      const response = await reply(cut);
      const error = await response[read]().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe('terminated');
    }
    const late = await reply(cut);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(late.json()).rejects.toThrow('terminated');
    const stream = await reply(cut);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(new Response(stream.body).text()).rejects.toThrow('terminated');
  });

  it('an abort while json() reads rejects with the signal reason and closes the connection', async () => {
    let serverSocketClosed!: Promise<void>;
    const controller = new AbortController();
    const response = await reply(
      (request, res) => {
        serverSocketClosed = new Promise((resolve) => request.socket.on('close', () => resolve()));
        res.writeHead(200);
        res.write('{"half":');
      },
      { signal: controller.signal },
    );
    const reading = response.json();
    const reason = new Error('client left');
    setTimeout(() => controller.abort(reason), 5);
    await expect(reading).rejects.toBe(reason);
    await serverSocketClosed;
  });

  it('decodes gzip and br for json() and the body stream alike', async () => {
    const { url } = await serve((request, res) => {
      const text = '{"zipped":true}';
      if (request.url === '/br') return void res.writeHead(200, { 'content-encoding': 'br' }).end(brotliCompressSync(text));
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(text));
    });
    const { fetch } = upstream();
    expect(await (await fetch(`${url}/gz`)).json()).toEqual({ zipped: true });
    expect(await (await fetch(`${url}/br`)).text()).toBe('{"zipped":true}');
    expect(await new Response((await fetch(`${url}/gz`)).body).text()).toBe('{"zipped":true}');
    expect(new Uint8Array(await (await fetch(`${url}/gz`)).arrayBuffer())).toEqual(new Uint8Array(Buffer.from('{"zipped":true}')));
  });

  it('undoes a list of codings last first, skips identity, and passes a coding it does not know as it came', async () => {
    const text = '{"zipped":true}';
    const { url } = await serve((request, res) => {
      if (request.url === '/stacked') return void res.writeHead(200, { 'content-encoding': 'gzip, identity,br' }).end(brotliCompressSync(gzipSync(text)));
      if (request.url === '/broken') return void res.writeHead(200, { 'content-encoding': 'gzip' }).end('not gzip at all');
      res.writeHead(200, { 'content-encoding': 'gzip, zstd' }).end('as sent');
    });
    const { fetch } = upstream();
    expect(await (await fetch(`${url}/stacked`)).json()).toEqual({ zipped: true });
    expect(await (await fetch(`${url}/unknown`)).text()).toBe('as sent');
    // Bytes that are not what the header says: the body errors, as a cut one does.
    await expect((await fetch(`${url}/broken`)).text()).rejects.toThrow(TypeError);
  });

  it('undoes at most five codings: a longer list fails the body, as undici refuses it', async () => {
    const text = '{"zipped":true}';
    const stacked = (times: number) => {
      let bytes: Buffer = Buffer.from(text);
      for (let index = 0; index < times; index++) bytes = gzipSync(bytes);
      return bytes;
    };
    const { url } = await serve((request, res) => {
      const times = Number(request.url?.slice(1));
      res.writeHead(200, { 'content-encoding': Array(times).fill('gzip').join(', ') }).end(stacked(Math.min(times, 6)));
    });
    const { fetch } = upstream();
    expect(await (await fetch(`${url}/5`)).json()).toEqual({ zipped: true });
    // As any body that fails: TypeError terminated, its cause saying why.
    const refused = { name: 'TypeError', message: 'terminated', cause: { message: 'the reply names more than 5 content codings' } };
    await expect((await fetch(`${url}/6`)).text()).rejects.toMatchObject(refused);
    // A header of a thousand builds no decoder for them (each holds its window): the body fails as fast.
    await expect((await fetch(`${url}/1000`)).text()).rejects.toMatchObject(refused);
  });

  it('follows a global Response replaced later by a subclass, so instanceof holds with it too', async () => {
    const original = globalThis.Response;
    class Subclass extends original {}
    globalThis.Response = Subclass as typeof Response;
    try {
      const response = await reply((_request, res) => json(res));
      expect(response).toBeInstanceOf(Subclass);
      expect(response).toBeInstanceOf(original);
      expect(await response.json()).toEqual({ a: [1, 'é'] });
    } finally {
      globalThis.Response = original;
    }
  });

  it('a reply without a body reads as empty as often as asked; the connection is reused after json()', async () => {
    const { url, server } = await serve((request, res) => {
      if (request.url === '/empty') return void res.writeHead(204, 'Nothing').end();
      json(res);
    });
    let connections = 0;
    server.on('connection', () => connections++);
    const { fetch } = upstream();
    const empty = await fetch(`${url}/empty`);
    expect([empty.status, empty.statusText, empty.body, empty.bodyUsed]).toEqual([204, 'Nothing', null, false]);
    expect(await empty.text()).toBe('');
    expect(await empty.text()).toBe('');
    expect((await empty.arrayBuffer()).byteLength).toBe(0);
    await expect(empty.json()).rejects.toBeInstanceOf(SyntaxError);
    expect(empty.clone().status).toBe(204);
    for (let index = 0; index < 3; index++) expect(await (await fetch(`${url}/`)).json()).toEqual({ a: [1, 'é'] });
    expect(connections).toBe(1);
  });
});
