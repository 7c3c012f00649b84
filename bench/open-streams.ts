/**
 * RSS of the reference server under many open streams: `OPEN_STREAMS` (default 1,000) streamed
 * chats at once against an upstream that drips an event every `DRIP_MS` (default 250 ms, some 20
 * events: each stream stays open about 5 s), read by clients that keep up. Samples the server's
 * RSS (/proc/<pid>/status, Linux) before, while all are open, and after they ended, and prints
 * one JSON line. Exit code 1 when a stream failed or the peak passed `RSS_LIMIT_MB` (default 150).
 *
 * Run: `npx tsx bench/open-streams.ts`.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { startChild } from './start-child';

const streams = Number(process.env.OPEN_STREAMS ?? 1_000);
const dripMs = Number(process.env.DRIP_MS ?? 250);
const limitMb = Number(process.env.RSS_LIMIT_MB ?? 150);

const rssMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((each) => each.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? Number.NaN) / 1024;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const upstream = await startChild<{ url: string }>('bench/fake-upstream-process.ts', [String(dripMs)]);
// Every stream open upstream at once: the server's pool (256 connections per origin by default)
// would otherwise queue all but 256 of them behind the others.
process.env.TOLLGATE_UPSTREAM_MAX_SOCKETS ??= String(streams + 64);
// Pro accounts admit 10 in flight each (burst 61 a minute): one account per ten streams.
const servers = await startChild<{ gateway: string; keys: string[] }>('bench/bench-servers-process.ts', [upstream.info.url, String(Math.ceil(streams / 10))]);
const pid = servers.pid;
const gateway = new URL(servers.info.gateway);
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** One streamed chat read to its end: its status and whether it ended with [DONE]. */
const stream = (key: string) =>
  new Promise<{ status: number; done: boolean }>((resolve) => {
    const body = JSON.stringify({ model: 'bench', stream: true, max_tokens: 64, messages: [{ role: 'user', content: 'Stream to me, slowly.' }] });
    const outgoing = request(
      {
        host: gateway.hostname,
        port: gateway.port,
        path: '/v1/chat/completions',
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      },
      (reply) => {
        let tail = '';
        reply.setEncoding('utf8');
        reply.on('data', (text: string) => {
          tail = (tail + text).slice(-64);
        });
        reply.on('end', () => resolve({ status: reply.statusCode ?? 0, done: tail.includes('data: [DONE]') }));
        reply.on('error', () => resolve({ status: reply.statusCode ?? 0, done: false }));
      },
    );
    outgoing.on('error', () => resolve({ status: 0, done: false }));
    outgoing.end(body);
  });

// Warm up (JIT, pools), then let the heap settle.
await Promise.all(servers.info.keys.slice(0, 10).map((key) => stream(key)));
await sleep(2_000);
const before = rssMb(pid);
let peak = before;
let open = 0;
let maxOpen = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, rssMb(pid));
}, 100);
const started = performance.now();
const results = await Promise.all(
  Array.from({ length: streams }, async (_, index) => {
    open++;
    maxOpen = Math.max(maxOpen, open);
    const result = await stream(servers.info.keys[Math.floor(index / 10)]!);
    open--;
    return result;
  }),
);
const seconds = (performance.now() - started) / 1000;
peak = Math.max(peak, rssMb(pid));
await sleep(5_000);
clearInterval(sampler);
const after = rssMb(pid);
agent.destroy();
await servers.stop();
await upstream.stop();

const failed = results.filter((result) => result.status !== 200 || !result.done).length;
console.log(
  JSON.stringify({
    streams,
    'drip ms': dripMs,
    'seconds with all open': Number(seconds.toFixed(1)),
    failed,
    'RSS MB before / peak / 5 s after': `${before.toFixed(0)} / ${peak.toFixed(0)} / ${after.toFixed(0)}`,
    'peak growth MB': Number((peak - before).toFixed(1)),
    'KB per open stream': Math.round(((peak - before) * 1024) / streams),
  }),
);
if (failed > 0 || peak > limitMb) process.exitCode = 1;
