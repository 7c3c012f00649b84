/**
 * Fuzz: generated requests of every kind a hostile or broken client sends (invalid and truncated
 * JSON, duplicate keys, deep nesting, huge numbers, wrong types, unicode and NUL, oversize and
 * slow bodies, bad and missing auth, odd methods and paths, header tricks), over raw sockets.
 * Every reply must be a status and code of the spec's catalogue (or the documented plain-text
 * 404/405 and the 431 of docs/http-api.md), carry X-Service-Version, never be a 500, never show a
 * stack or internals; the server must stay up and its RSS come back near where it was.
 */
import { ERROR_CATALOGUE, isErrorCode } from '@tollgate/core';
import type { Backend } from '../harness/backend';
import { rawExchange, type RawReply } from '../harness/raw-http';
import { check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild } from '../harness/server-child';
import { catalogueEnv, createAccounts, removeDir, startUpstream } from '../harness/world';
import { random } from '../harness/random';

/** One generated request: its kind (for the table) and its bytes. */
interface Generated {
  kind: string;
  head: string;
  body: string | Uint8Array;
  /** Body sent in pieces this far apart. */
  slow?: boolean;
}

const PATH = '/v1/chat/completions';
/** Internals a reply must never show: stack frames, source files, Node internals, SQL. */
const LEAK = /\bat \S+ \(|node:internal|\.ts:\d+|\.js:\d+|\bTypeError\b|\bSyntaxError\b|\bSQLITE_|\bECONNREFUSED\b|\bselect \w+ from\b/i;

function request(method: string, path: string, headers: Record<string, string>, body: string | Uint8Array): string {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (!('Content-Length' in headers) && !('Transfer-Encoding' in headers) && (length > 0 || method === 'POST')) lines.push(`Content-Length: ${length}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The generators, each a kind of request; `keys` are good keys, used in turn. */
function generators(next: () => number, keys: string[]): ((n: number) => Generated)[] {
  let turn = 0;
  const nextKey = () => keys[turn++ % keys.length] ?? '';
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)] as T;
  const auth = () => ({ Authorization: `Bearer ${nextKey()}`, 'Content-Type': 'application/json' });
  const valid = () => ({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 5 });
  const post = (kind: string, body: string | Uint8Array, headers: Record<string, string> = auth()): Generated => ({
    kind,
    head: request('POST', PATH, headers, body),
    body,
  });
  const json = (value: unknown) => JSON.stringify(value);
  const wrongValues = [null, true, 0, -1, 1.5, 1e308, '', 'x', [], {}, [1], { a: 1 }, '\u0000', 'a'.repeat(1000)];
  const fields = [
    'model',
    'messages',
    'stream',
    'stream_options',
    'max_tokens',
    'max_completion_tokens',
    'tools',
    'tool_choice',
    'reasoning_effort',
    'parallel_tool_calls',
  ];
  return [
    () => {
      const text = json(valid());
      return post('truncated JSON', text.slice(0, Math.floor(next() * text.length)));
    },
    () =>
      post(
        'invalid JSON',
        pick(['{', '}', '{"model":', "{'model':'chat'}", '[1,2', 'nul', '{"a":1,}', '{"a" 1}', '\u0000{}', 'NaN', '{"model":"chat"}x', '\ufeff{}']),
      ),
    () => post('not an object', pick(['[]', '1', '"str"', 'null', 'true', '[{"model":"chat"}]'])),
    () => post('duplicate keys', `{"model":"chat","model":"chat","messages":[{"role":"user","content":"hi","content":"x"}]}`),
    () => {
      const depth = Math.floor(next() * 5_000) + 1;
      return post('deep nesting', `{"model":"chat","messages":[{"role":"user","content":${'['.repeat(depth)}${']'.repeat(depth)}}]}`);
    },
    () =>
      post(
        'huge numbers',
        `{"model":"chat","messages":[{"role":"user","content":"hi"}],"${pick(['max_tokens', 'max_completion_tokens'])}":${pick(['1e400', '18446744073709551616', '-0', '0.5', '-1', '1e21', '1E2', '1.0'])}}`,
      ),
    () => post('huge number literal', `{"model":"chat","messages":[],"max_tokens":${'9'.repeat(Math.floor(next() * 400) + 20)}}`),
    () => post('wrong types', json({ ...valid(), [pick(fields)]: pick(wrongValues) })),
    () =>
      post(
        'wrong message shapes',
        json({ model: 'chat', messages: [pick([{ role: 'robot' }, { role: 'user', content: 5 }, 'hi', null, { role: 'tool' }, { content: 'x' }])] }),
      ),
    () =>
      post(
        'unicode and NUL',
        json({
          model: pick(['chat', 'ch\u0000at', '\ud800', '💥', 'ｃｈａｔ']),
          messages: [{ role: 'user', content: pick(['\u0000', '\ud800\udc00', '\ud800', 'é'.repeat(100), '\u202e']) }],
        }),
      ),
    () => post('invalid UTF-8', new Uint8Array([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x22, 0x7d])),
    () => ({ kind: 'oversize declared', head: request('POST', PATH, { ...auth(), 'Content-Length': String(40 * 1024 * 1024) }, ''), body: '{}' }),
    () => post('too many values', `{"model":"chat","messages":[],"x":[${'0,'.repeat(270_000)}0]}`),
    () => post('too many messages', json({ model: 'chat', messages: Array.from({ length: 4_097 }, () => ({ role: 'user', content: '' })) })),
    () => ({ ...post('slow body', json(valid())), slow: true }),
    () =>
      post(
        'bad auth',
        json(valid()),
        pick<Record<string, string>>([
          {},
          { Authorization: '' },
          { Authorization: 'Basic dXNlcjpwYXNz' },
          { Authorization: 'Bearer' },
          { Authorization: 'Bearer sk_svc_short' },
          { Authorization: 'Bearer sk_other_0123456789' },
          { Authorization: `Bearer ${nextKey().slice(0, -1)}x` },
          { Authorization: `bearer ${nextKey()}x` },
          { Authorization: 'Bearer not-a-key' },
          { Authorization: `Bearer ${nextKey()} ${nextKey()}` },
        ]),
      ),
    () => {
      const method = pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'BREW', 'PROPFIND', 'CONNECT']);
      const path = pick([PATH, '/v1/models', '/v1/images/generations', '/', '*']);
      return { kind: 'odd methods', head: request(method, path, { Authorization: `Bearer ${nextKey()}` }, ''), body: '' };
    },
    () => {
      const path = pick([
        '/v1/chat/completions/',
        '//v1/models',
        '/v1/../v1/models',
        '/V1/models',
        '/v1/models?x=1',
        '/v1/%00',
        `/v1/${'a'.repeat(8_000)}`,
        '/v2/chat/completions',
        '/v1/models#x',
        '/.env',
      ]);
      return { kind: 'odd paths', head: request('GET', path, { Authorization: `Bearer ${nextKey()}` }, ''), body: '' };
    },
    (n) => {
      const body = json(valid());
      const tricks: Record<string, string>[] = [
        { ...auth(), 'Content-Length': '2', 'Transfer-Encoding': 'chunked' },
        { ...auth(), 'Content-Encoding': 'gzip' },
        { ...auth(), 'X-Pad': 'a'.repeat(17_000) },
        { ...auth(), 'Content-Type': 'text/plain' },
        { ...auth(), Expect: '100-continue' },
        { ...auth(), 'X-Forwarded-For': '127.0.0.1, 10.0.0.1', 'X-Real-IP': '::1' },
        { ...auth(), 'Content-Length': `${Buffer.byteLength(body)}, ${Buffer.byteLength(body)}` },
        { ...auth(), 'X-Ünicode': 'x' },
        { ...auth(), Authorization: `Bearer ${nextKey()}\u0000` },
        Object.fromEntries([...Object.entries(auth()), ...Array.from({ length: 150 }, (_, index) => [`X-H${index}`, String(index)])]),
      ];
      return post('header tricks', body, tricks[n % tricks.length] ?? auth());
    },
    () => ({
      kind: 'bad chunked',
      head: request('POST', PATH, { ...auth(), 'Transfer-Encoding': 'chunked' }, ''),
      body: pick(['zz\r\n{}\r\n0\r\n\r\n', '5\r\n{}\r\n0\r\n\r\n', '2\r\n{}\r\nzz\r\n']),
    }),
    () => ({
      kind: 'garbage',
      head: pick(['GET\r\n\r\n', 'HELLO WORLD\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', `${'A'.repeat(9_000)}\r\n\r\n`, 'GET / HTTP/1.1\r\n\tfolded\r\n\r\n']),
      body: '',
    }),
    () => post('valid', json({ ...valid(), stream: next() < 0.5 })),
  ];
}

/** One request whose exact reply the issue named (issue #20), and what that reply must be. */
interface KnownCase {
  name: string;
  bytes: string;
  status: number;
  /** The envelope's code, or undefined for the plain-text 405. */
  code?: string;
  /** A test on the message (or the plain-text body). */
  message: (text: string) => boolean;
}

/** The replies the first torture run found wrong, each checked exactly. */
function knownCases(key: string): KnownCase[] {
  const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const chat = (body: string, headers: Record<string, string> = auth) => request('POST', PATH, headers, body) + body;
  return [
    {
      name: 'an empty model names the rule, not a wrong JSON type',
      bytes: chat('{"model":"","messages":[{"role":"user","content":"hi"}]}'),
      status: 400,
      code: 'invalid_request_body',
      message: (text) => text.includes('model') && !text.includes('wrong JSON type'),
    },
    {
      name: 'Content-Encoding: gzip on a plain body is refused, naming Content-Encoding',
      bytes: chat('{"model":"chat","messages":[{"role":"user","content":"hi"}]}', { ...auth, 'Content-Encoding': 'gzip' }),
      status: 400,
      code: 'invalid_request_body',
      message: (text) => text.includes('Content-Encoding'),
    },
    {
      name: 'an unknown method is the plain-text 405',
      bytes: 'BREW /v1/models HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
      status: 405,
      message: (text) => text === 'Method Not Allowed',
    },
    {
      name: 'a malformed request line is 400 in the envelope',
      bytes: 'HELLO WORLD\r\n\r\n',
      status: 400,
      code: 'invalid_request_body',
      message: (text) => text.length > 0,
    },
    {
      name: 'headers over 16 KB are 431 request_too_large in the envelope',
      bytes: `GET /v1/models HTTP/1.1\r\nHost: a\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`,
      status: 431,
      code: 'request_too_large',
      message: (text) => text.length > 0,
    },
  ];
}

/** What is wrong with a known case's reply, or undefined. */
async function knownCaseVerdict(port: number, known: KnownCase): Promise<string | undefined> {
  const reply = await rawExchange(port, known.bytes);
  const got = `${reply.status} ${reply.body.slice(0, 160)}`;
  if (reply.status !== known.status || reply.headers['x-service-version'] === undefined) return got;
  if (known.code === undefined) return known.message(reply.body) ? undefined : got;
  try {
    const error = (JSON.parse(reply.body) as { error?: { code?: string; message?: string } }).error;
    return error?.code === known.code && known.message(error.message ?? '') ? undefined : got;
  } catch {
    return got;
  }
}

/** Whether a reply is one the spec (or docs/http-api.md) allows; the reason when not. */
function judge(reply: RawReply, head: string): string | undefined {
  if (reply.status === 0) return 'no reply';
  if (reply.status >= 500 && reply.status !== 502 && reply.status !== 503) return `status ${reply.status}`;
  if (reply.headers['x-service-version'] === undefined) return `${reply.status} without X-Service-Version`;
  if (LEAK.test(reply.body)) return `internals in the body: ${reply.body.slice(0, 120)}`;
  if (reply.status === 200) return undefined;
  if ((reply.status === 404 || reply.status === 405) && (reply.headers['content-type']?.startsWith('text/plain') || head.startsWith('HEAD'))) return undefined;
  let code: unknown;
  try {
    const parsed = JSON.parse(reply.body) as { error?: Record<string, unknown> };
    if (
      Object.keys(parsed).length !== 1 ||
      Object.keys(parsed.error ?? {})
        .sort()
        .join() !== 'code,message,param,type' ||
      parsed.error?.param !== null
    )
      return `not the envelope: ${reply.body.slice(0, 120)}`;
    code = parsed.error?.code;
  } catch {
    return head.startsWith('HEAD') ? undefined : `${reply.status} body is not JSON: ${reply.body.slice(0, 80)}`;
  }
  if (!isErrorCode(code)) return `unknown code ${String(code)}`;
  if (reply.status === 431 && code === 'request_too_large') return undefined;
  return ERROR_CATALOGUE[code].status === reply.status ? undefined : `${reply.status} with ${code}`;
}

export async function fuzzScenario(size: Size, dir: string, backend: Backend, seed = 20): Promise<ScenarioResult> {
  const total = size === 'full' ? 20_000 : 1_000;
  const warmUp = size === 'full' ? 2_000 : 500;
  const concurrency = 24;
  const upstream = await startUpstream();
  const env = { ...catalogueEnv(dir, [{ id: 'chat', baseURL: `${upstream.url}/v1` }]), ...backend.env };
  const store = backend.open();
  // Plan limits are per account (max: 10 a second, burst 61): enough accounts that the fuzz reaches the body parser.
  const accounts = await createAccounts(store, size === 'full' ? 60 : 30, 'max', 1_000_000_000);
  const account = accounts[0];
  await store.close?.();
  const server = await startServerChild(env);
  const next = random(seed);
  const kinds = generators(
    next,
    accounts.map((each) => each.key),
  );
  const counts = new Map<string, number>();
  const bad = new Map<string, number>();
  let five = 0;
  try {
    /** Sends `count` generated requests, `concurrency` at a time; `onReply` sees each reply. */
    const drive = async (make: ((n: number) => Generated)[], count: number, onReply: (generated: Generated, reply: RawReply) => void) => {
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const n = next++;
          const generator = make[n % make.length];
          if (!generator) continue;
          const generated = generator(n);
          const body = typeof generated.body === 'string' ? Buffer.from(generated.body) : generated.body;
          const reply = generated.slow
            ? await rawExchange(server.port, generated.head, { more: [body.subarray(0, 10), body.subarray(10)], gapMs: 300 })
            : await rawExchange(server.port, Buffer.concat([Buffer.from(generated.head, 'latin1'), body]));
          onReply(generated, reply);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    };
    // Warm up before the first RSS reading, on requests of another seed: code loaded, and V8's heap
    // grown to its working size (it keeps what it grew), so the comparison shows what the fuzz kept.
    await drive(
      generators(
        random(seed + 1),
        accounts.map((each) => each.key),
      ),
      warmUp,
      () => {},
    );
    const rssBefore = server.rss();
    let rssMid = 0;
    let done = 0;
    const started = performance.now();
    await drive(kinds, total, (generated, reply) => {
      if (++done === total / 2) rssMid = server.rss();
      counts.set(`${reply.status}`, (counts.get(`${reply.status}`) ?? 0) + 1);
      if (reply.status === 500) five++;
      const verdict = judge(reply, generated.head);
      if (verdict && generated.kind === 'garbage') bad.set(`garbage ${JSON.stringify(generated.head.slice(0, 24))}: ${verdict}`, 1);
      else if (verdict) bad.set(`${generated.kind}: ${verdict.slice(0, 100)}`, (bad.get(`${generated.kind}: ${verdict.slice(0, 100)}`) ?? 0) + 1);
    });
    const seconds = (performance.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const rssAfter = server.rss();
    await server.metrics();
    const alive = await rawExchange(server.port, request('GET', '/v1/models', { Authorization: `Bearer ${account?.key}` }, ''));
    const known: string[] = [];
    for (const each of knownCases(accounts[1]?.key ?? '')) {
      const verdict = await knownCaseVerdict(server.port, each);
      if (verdict !== undefined) known.push(`${each.name}: got ${verdict}`);
    }
    const grew = rssAfter - rssBefore;
    return {
      scenario: 'fuzz',
      figures: {
        requests: total,
        'req/s': Math.round(total / seconds),
        statuses: [...counts].map(([status, count]) => `${count}× ${status}`).join(', '),
        'not per spec': [...bad.values()].reduce((sum, count) => sum + count, 0),
        'warm-up requests': warmUp,
        'RSS before / half-way / after MB': `${Math.round(rssBefore / 2 ** 20)} / ${Math.round(rssMid / 2 ** 20)} / ${Math.round(rssAfter / 2 ** 20)}`,
        seed,
      },
      checks: [
        check(
          `${total} generated requests, every reply per the spec's catalogue`,
          bad.size === 0,
          bad.size === 0 ? 'all' : [...bad].map(([what, count]) => `${count}× ${what}`).join(' | '),
        ),
        check('no 500', five === 0, `${five}`),
        check(
          'the replies the first torture run found wrong are right (empty model, Content-Encoding, unknown method, malformed line, 431)',
          known.length === 0,
          known.length === 0 ? `${knownCases('').length} cases` : known.join(' | '),
        ),
        check('the server still serves after the fuzz', alive.status === 200 && server.child.exitCode === null, `GET /v1/models: ${alive.status}`),
        check(
          'RSS after is back near RSS before (within 64 MB)',
          grew < 64 * 2 ** 20,
          `${Math.round(rssBefore / 2 ** 20)} MB -> ${Math.round(rssAfter / 2 ** 20)} MB`,
        ),
      ],
    };
  } finally {
    await server.stop(5_000);
    await upstream.close();
    removeDir(dir);
  }
}
