/**
 * The Node adapter alone: `createNodeListener` of `@tollgate/node` against `getRequestListener` of
 * `@hono/node-server` (as `serve()` installs it, global Request/Response overridden), each serving a
 * stand-in handler in a child process of its own: it reads the body off `request.body` as the
 * gateway's `readBody` does, then answers a JSON string (non-streamed) or a pull-based stream of 40
 * SSE events, each ready at once (streamed), with the gateway's reply headers. autocannon drives it
 * with 32 connections; the figure is the child's CPU µs per request (from /proc), alternating the
 * two adapters `BENCH_ROUNDS` times (default 3); then the median time to the first body byte of 300
 * streamed requests sent one at a time.
 *
 * Run: `npx tsx bench/listener-only.ts` (`BENCH_SECONDS`, default 3).
 */
import { readFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { startChild } from './start-child';

const role = process.argv[2];
if (role === 'lean' || role === 'hono') await serveChild(role);
else await measure();

async function serveChild(mode: 'lean' | 'hono'): Promise<void> {
  const encoder = new TextEncoder();
  const event = encoder.encode(
    `data: ${JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'word ' } }] })}\n\n`,
  );
  const reply = JSON.stringify({
    id: 'chatcmpl-x',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(36) } }],
  });
  const headers = { 'content-type': 'application/json', 'x-service-version': 'tollgate/bench', 'x-request-id': 'req_0123456789', 'x-funding': 'credits' };
  const handler = async (request: Request): Promise<Response> => {
    const reader = request.body!.getReader();
    let bytes = 0;
    for (;;) {
      const step = await reader.read();
      if (step.done) break;
      bytes += step.value.byteLength;
    }
    if (bytes === 0 || !request.url.endsWith('/stream')) return new Response(reply, { status: 200, headers });
    const signal = request.signal; // the gateway watches it on streams
    let sent = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          await undefined;
          if (signal.aborted || sent++ === 40) controller.close();
          else controller.enqueue(event);
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: 200, headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8' } });
  };
  const listener =
    mode === 'lean'
      ? (await import('@tollgate/node')).createNodeListener(handler, { hostname: '127.0.0.1' })
      : (await import('@hono/node-server')).getRequestListener(handler, { hostname: '127.0.0.1' });
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

async function measure(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const body = JSON.stringify({ model: 'bench', stream: false, max_tokens: 64, messages: [{ role: 'user', content: 'Benchmark me, please.' }] });
  const figures: Record<string, number[]> = {};
  for (let round = 0; round < rounds; round++) {
    for (const mode of ['hono', 'lean'] as const) {
      const child = await startChild<{ url: string }>('bench/listener-only.ts', [mode]);
      for (const path of ['/json', '/stream']) {
        const before = cpuMicros(child.pid);
        const result = await autocannon({
          url: `${child.info.url}${path}`,
          method: 'POST',
          connections: 32,
          duration: seconds,
          body,
          headers: { 'content-type': 'application/json' },
        });
        const after = cpuMicros(child.pid);
        if (result.errors + result.non2xx + result.timeouts > 0) throw new Error(`${mode} ${path}: errors`);
        const key = `${mode} ${path === '/json' ? 'non-streamed' : 'streamed'} CPU µs/req`;
        const figure = Math.round((after - before) / result.requests.total);
        figures[key] = [...(figures[key] ?? []), figure];
      }
      const ttfb = await firstBytes(`${child.info.url}/stream`, body, 300);
      figures[`${mode} TTFB µs p50`] = [...(figures[`${mode} TTFB µs p50`] ?? []), ttfb];
      await child.stop();
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
  for (const [key, values] of Object.entries(figures)) console.log(`${key.padEnd(30)} ${values.join(', ')}; median ${median(values)}`);
}

/** Median time from sending a streamed request to its first body byte, one request at a time, in µs. */
async function firstBytes(url: string, body: string, samples: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    times.push(
      await new Promise<number>((resolve, reject) => {
        const started = process.hrtime.bigint();
        const outgoing = httpRequest(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (response) => {
          response.once('data', () => resolve(Number(process.hrtime.bigint() - started) / 1_000));
          response.on('end', () => undefined);
          response.resume();
        });
        outgoing.on('error', reject);
        outgoing.end(body);
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
  }
  agent.destroy();
  return Math.round([...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? Number.NaN);
}

function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / 100; // utime + stime in clock ticks (USER_HZ 100)
}
