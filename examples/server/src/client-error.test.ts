/**
 * Replies made below the gateway, by Node's HTTP parser, carry X-Service-Version and the error
 * envelope; an unknown method is the plain-text 405 (issue #20). Real sockets against the
 * reference server, and the listener alone for the header timeout (Node checks it every 30 s).
 * Also what the @hono/node-server adapter answered bare: CONNECT and targets it cannot parse.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from './client-error';
import { loadConfig, VERSION } from './config';
import { startServer, type RunningServer } from './start-server';

const version = `tollgate/${VERSION}`;

/** Sends raw bytes and reads until the server closes (or 10 s pass). */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    const timer = setTimeout(() => socket.destroy(), 10_000);
    socket.on('data', (data) => (text += data.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });
}

/** Status, headers (lower-case) and body of a raw HTTP/1.1 reply. */
function parse(reply: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', body = ''] = reply.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const at = line.indexOf(':');
    headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('replies of the HTTP parser', () => {
  let server: RunningServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-client-error-'));
    server = await startServer(loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dir }), { log: () => {}, demo: false });
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unknown method is the plain-text 405 with X-Service-Version', async () => {
    const reply = parse(await raw(server.port, 'BREW /v1/models HTTP/1.1\r\nHost: a\r\n\r\n'));
    expect(reply.status).toBe(405);
    expect(reply.headers['x-service-version']).toBe(version);
    expect(reply.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(reply.body).toBe('Method Not Allowed');
  });

  it.each([
    ['a request line that is not HTTP', 'hello there\r\n\r\n'],
    ['a malformed header', 'POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n'],
    ['a NUL in the target', 'GET /v1/\0models HTTP/1.1\r\nHost: a\r\n\r\n'],
    ['two Content-Lengths that disagree', 'POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
  ])('%s is 400 invalid_request_body in the error envelope', async (_name, bytes) => {
    const reply = parse(await raw(server.port, bytes));
    expect(reply.status).toBe(400);
    expect(reply.headers['x-service-version']).toBe(version);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(JSON.parse(reply.body)).toEqual({
      error: { message: 'The request is not valid HTTP/1.1.', type: 'invalid_request_error', param: null, code: 'invalid_request_body' },
    });
  });

  it('CONNECT, which Node would drop without a word, is the plain-text 405', async () => {
    const reply = parse(await raw(server.port, 'CONNECT /v1/models HTTP/1.1\r\nHost: a\r\n\r\n'));
    expect(reply.status).toBe(405);
    expect(reply.headers['x-service-version']).toBe(version);
    expect(reply.body).toBe('Method Not Allowed');
  });

  it("TRACE, which a web Request cannot carry, is the gateway's plain-text 405 on a path it serves and 404 elsewhere", async () => {
    const served = parse(await raw(server.port, 'TRACE /v1/models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'));
    expect([served.status, served.headers['content-type'], served.headers['x-service-version'], served.body]).toEqual([
      405,
      'text/plain; charset=utf-8',
      version,
      'Method Not Allowed',
    ]);
    const unknown = parse(await raw(server.port, 'TRACE /v1/nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'));
    expect([unknown.status, unknown.headers['x-service-version'], unknown.body]).toEqual([404, version, 'Not Found']);
  });

  it.each([
    ['an asterisk target', 'GET * HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'],
    ['a backslash in the path', 'GET /v1\\models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'],
  ])('%s, which the adapter cannot make a Request of, is 400 invalid_request_body in the envelope', async (_name, bytes) => {
    const reply = parse(await raw(server.port, bytes));
    expect(reply.status).toBe(400);
    expect(reply.headers['x-service-version']).toBe(version);
    expect(JSON.parse(reply.body)).toEqual({
      error: { message: 'The request target or Host header is not valid.', type: 'invalid_request_error', param: null, code: 'invalid_request_body' },
    });
  });

  it("a bad request pipelined behind a good one cuts the connection: its 400 never goes out as the good one's reply", async () => {
    const reply = await raw(
      server.port,
      'GET /v1/models HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer sk_svc_0000000000000000000000000000000000000000000\r\n\r\n' +
        'GET /x HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n',
    );
    expect(reply).not.toMatch(/^HTTP\/1\.1 400/);
    // What went out, if anything, is the first request's own answer.
    if (reply !== '') expect(parse(reply).status).toBe(401);
  });

  it('a request without Host is served as HTTP/1.0 would be, not refused bare', async () => {
    const reply = parse(await raw(server.port, 'GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n'));
    expect(reply.status).toBe(401);
    expect(reply.headers['x-service-version']).toBe(version);
    expect(JSON.parse(reply.body).error.code).toBe('invalid_api_key');
  });

  it('headers over 16 KB are 431 with the request_too_large envelope', async () => {
    const reply = parse(await raw(server.port, `GET /v1/models HTTP/1.1\r\nHost: a\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`));
    expect(reply.status).toBe(431);
    expect(reply.headers['x-service-version']).toBe(version);
    expect(JSON.parse(reply.body)).toEqual({
      error: { message: 'The request headers are larger than 16 KB.', type: 'invalid_request_error', param: null, code: 'request_too_large' },
    });
  });

  it('a good request on the same server still reaches the gateway', async () => {
    const reply = parse(await raw(server.port, 'GET /v1/models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n'));
    expect(reply.status).toBe(401);
    expect(JSON.parse(reply.body).error.code).toBe('invalid_api_key');
  });
});

describe('answerClientError', () => {
  /** A socket that records what is written to it. */
  function socket(): { socket: Duplex; written: () => string } {
    let text = '';
    const duplex = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString('latin1');
        callback();
      },
    });
    return { socket: duplex, written: () => text };
  }

  it('a request timeout is 408 request_timeout with X-Service-Version', () => {
    const { socket: duplex, written } = socket();
    answerClientError('v-test')(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), duplex);
    const reply = parse(written());
    expect(reply.status).toBe(408);
    expect(reply.headers['x-service-version']).toBe('v-test');
    expect(reply.headers.connection).toBe('close');
    expect(Number(reply.headers['content-length'])).toBe(Buffer.byteLength(reply.body));
    expect(JSON.parse(reply.body).error).toEqual({
      message: 'The request did not arrive within the time allowed.',
      type: 'invalid_request_error',
      param: null,
      code: 'request_timeout',
    });
    duplex.destroy();
  });

  it('writes nothing into a reply already under way, and nothing on a reset connection', () => {
    const busy = socket();
    Reflect.set(busy.socket, '_httpMessage', { headersSent: true });
    answerClientError('v')(Object.assign(new Error('bad'), { code: 'HPE_INVALID_HEADER_TOKEN' }), busy.socket);
    expect(busy.written()).toBe('');
    expect(busy.socket.destroyed).toBe(true);

    const reset = socket();
    answerClientError('v')(Object.assign(new Error('reset'), { code: 'ECONNRESET' }), reset.socket);
    expect(reset.written()).toBe('');
    expect(reset.socket.destroyed).toBe(true);
  });
});
