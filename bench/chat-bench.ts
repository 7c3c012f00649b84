/**
 * Chat through the reference server versus a bare node:http pass-through proxy, both in front of
 * the same loopback fake upstream, measured in one run with autocannon.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { fakeOpenAI } from '@tollgate/testing';
import { listen } from '@tollgate/testing/server';
import { loadConfig } from '../examples/server/src/config';
import { startServer } from '../examples/server/src/start-server';

/** One measured row. */
export interface ChatRow {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/** Options of {@link runChatBench}. */
export interface ChatBenchOptions {
  /** Seconds per autocannon run. */
  seconds: number;
  connections: number;
  /** Sequential streamed requests for the time-to-first-byte figure. */
  ttfbSamples: number;
}

/** The whole comparison: non-streamed, streamed, and streamed time to first byte. */
export async function runChatBench(options: ChatBenchOptions) {
  const upstream = await listen(fakeOpenAI({ reply: 'The quick brown fox jumps over the lazy dog. '.repeat(4) }).handle);
  const bare = await bareProxy(upstream.port);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  const catalogue = join(dir, 'catalogue.json');
  writeFileSync(catalogue, JSON.stringify({
    providers: { upstream: { kind: 'openai-compatible', baseURL: `${upstream.url}/v1`, apiKeyEnv: 'BENCH_UPSTREAM_KEY' } },
    models: [{ id: 'bench', type: 'chat', provider: 'upstream', upstream: 'gpt-4o-mini', max_output_tokens: 256,
      price: { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 10 } }],
  }));
  process.env.BENCH_UPSTREAM_KEY = 'bench-upstream-key';
  const server = await startServer(
    loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dir, TOLLGATE_CATALOGUE: catalogue }),
    { log: () => {}, demo: false },
  );
  // Plan limits are per account (pro: 10 a second, burst 61): spread the load over many accounts.
  const keys: string[] = [];
  for (let index = 0; index < 400; index++) {
    const account = await server.store.createAccount({ plan: 'pro' });
    await server.store.addCredits(account.id, 1_000_000_000);
    keys.push((await server.store.createKey(account.id, 'bench')).key);
  }
  const body = (stream: boolean) => JSON.stringify({ model: 'bench', stream, max_tokens: 64, messages: [{ role: 'user', content: 'Benchmark me, please.' }] });
  const rows: ChatRow[] = [];
  try {
    for (const stream of [false, true]) {
      const label = stream ? 'streamed' : 'non-streamed';
      rows.push(await cannon(`bare proxy, ${label}`, `${bare.url}/v1/chat/completions`, body(stream), () => 'bench-upstream-key', options));
      let next = 0;
      rows.push(await cannon(`gateway, ${label}`, `${server.url}/v1/chat/completions`, body(stream), () => keys[next++ % keys.length]!, options));
    }
    const ttfb = {
      bare: await timeToFirstByte(`${bare.url}/v1/chat/completions`, body(true), () => 'bench-upstream-key', options.ttfbSamples),
      gateway: await timeToFirstByte(`${server.url}/v1/chat/completions`, body(true), (() => { let next = 0; return () => keys[next++ % keys.length]!; })(), options.ttfbSamples),
    };
    return { rows, ttfb };
  } finally {
    await server.close();
    await upstream.close();
    bare.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function cannon(name: string, url: string, body: string, key: () => string, options: ChatBenchOptions): Promise<ChatRow> {
  const result = await autocannon({
    url,
    method: 'POST',
    connections: options.connections,
    duration: options.seconds,
    body,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, authorization: `Bearer ${key()}` } }) }],
  });
  return {
    name,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

async function timeToFirstByte(url: string, body: string, key: () => string, samples: number): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key()}` }, body });
    const reader = response.body!.getReader();
    await reader.read();
    times.push(performance.now() - started);
    while (!(await reader.read()).done);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)]!, p99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]! };
}

/** The baseline: a bare node:http proxy that pipes requests and replies through unchanged. */
async function bareProxy(upstreamPort: number): Promise<{ server: Server; url: string }> {
  const server = createServer((incoming, outgoing) => {
    const upstream = httpRequest(
      { host: '127.0.0.1', port: upstreamPort, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (reply) => {
        outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
