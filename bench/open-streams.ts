/**
 * RSS of the reference server under many open streams: `OPEN_STREAMS` (default 1,000) streamed
 * chats at once against an upstream that drips an event every `DRIP_MS` (default 250 ms, some 20
 * events: each stream stays open about 5 s), read by clients that keep up. Samples the server's
 * RSS (/proc/<pid>/status, Linux) before, while all are open, 5 s after they ended and `AFTER_S`
 * (default 20) seconds after, and prints one JSON line. Exit code 1 when a stream failed, the peak
 * passed `RSS_LIMIT_MB` (default 150), or the RSS `AFTER_S` after was not back within
 * `RSS_RETURN_MB` (default 15) of its start: the server gives a burst's memory back once it goes
 * quiet (`releaseMemoryWhenIdle` of @tollgate/node, within some 15 s; `TOLLGATE_RELEASE_MEMORY`).
 *
 * The server is the one `npm start` runs: the bundle (`prestart`, scripts/build-server.mjs) on
 * `node` with the flags of the root package.json's `start` script, configured by the environment
 * (a catalogue of the fake upstream, `TOLLGATE_UPSTREAM_MAX_SOCKETS`), its request log read and
 * dropped, stopped with SIGTERM. `BENCH_SERVER=tsx` runs the CLI through tsx instead
 * (`node examples/server/bin/tollgate.mjs serve`, as `npm run tollgate -- serve`), for comparison;
 * `BENCH_NODE_ARGS` adds node flags (e.g. `--max-semi-space-size=2`) before the script.
 * `BENCH_HEAP_SNAPSHOT=1` also writes heap snapshots of the server, idle and while every stream is
 * open (to `bench-heap/` at the root; `--heapsnapshot-signal`), which stall it for their seconds.
 * `PROMPT_KB=32` sends a 32 KiB user message instead of a short one (what an open stream keeps of
 * its request shows in the RSS). `BENCH_ECHO_STDERR=1` passes the server's stderr through (e.g. what a `--import` module of
 * `BENCH_NODE_ARGS` prints about its memory).
 *
 * Run: `npx tsx bench/open-streams.ts`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sqliteStore } from '@tollgate/store-sqlite';
import { writeBenchCatalogue } from './bench-catalogue';
import { startChild } from './start-child';
import { startScript } from './start-script';

const streams = Number(process.env.OPEN_STREAMS ?? 1_000);
// The user message: a short one by default; PROMPT_KB pads it to that many KiB (what a stream keeps of its request).
const promptKb = Number(process.env.PROMPT_KB ?? 0);
const prompt =
  promptKb > 0 ? `Stream to me, slowly. ${'lorem ipsum '.repeat(Math.ceil((promptKb * 1024) / 12))}`.slice(0, promptKb * 1024) : 'Stream to me, slowly.';
const dripMs = Number(process.env.DRIP_MS ?? 250);
const limitMb = Number(process.env.RSS_LIMIT_MB ?? 150);
const afterS = Number(process.env.AFTER_S ?? 20);
const returnMb = Number(process.env.RSS_RETURN_MB ?? 15);
const mode = process.env.BENCH_SERVER === 'tsx' ? 'tsx' : 'bundle';
const extraNodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const heapSnapshot = process.env.BENCH_HEAP_SNAPSHOT === '1';
const root = fileURLToPath(new URL('..', import.meta.url));

const rssMb = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((each) => each.startsWith('VmRSS:'));
  return Number(line?.split(/\s+/)[1] ?? Number.NaN) / 1024;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The node arguments of the server as `npm start` runs it (`[exec] node <args>` of the start script), after its `prestart` build. */
function startArgs(): string[] {
  const built = spawnSync(process.execPath, ['scripts/build-server.mjs'], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('scripts/build-server.mjs failed');
  return startScript().args;
}

const upstream = await startChild<{ url: string }>('bench/fake-upstream-process.ts', [String(dripMs)]);
const dir = mkdtempSync(join(tmpdir(), 'tollgate-open-streams-'));
const catalogue = writeBenchCatalogue(dir, upstream.info.url);
const snapshotDir = join(root, 'bench-heap');
// Node dies of the signal instead of writing the snapshot when this directory does not exist.
if (heapSnapshot) mkdirSync(snapshotDir, { recursive: true });
const nodeArgs = [
  ...extraNodeArgs,
  ...(heapSnapshot ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : []),
  ...(mode === 'tsx' ? ['examples/server/bin/tollgate.mjs', 'serve'] : startArgs()),
];
const server = spawn(process.execPath, nodeArgs, {
  cwd: root,
  env: {
    ...process.env,
    PORT: '0',
    ADMIN_PORT: '0',
    TOLLGATE_DATA_DIR: dir,
    TOLLGATE_CATALOGUE: catalogue,
    BENCH_UPSTREAM_KEY: 'bench-upstream-key',
    // Every stream open upstream at once: the server's pool (256 connections per origin by default)
    // would otherwise queue all but 256 of them behind the others.
    TOLLGATE_UPSTREAM_MAX_SOCKETS: process.env.TOLLGATE_UPSTREAM_MAX_SOCKETS ?? String(streams + 64),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let stderr = '';
server.stderr!.on('data', (data) => {
  stderr += data;
  if (process.env.BENCH_ECHO_STDERR) process.stderr.write(data);
});
const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
// The request log (a JSON line per request) is read and dropped, as a log shipper would take it.
const gateway = await new Promise<URL>((resolve, reject) => {
  createInterface({ input: server.stdout! }).on('line', (line) => {
    if (line.includes('"msg":"listening"')) resolve(new URL((JSON.parse(line) as { url: string }).url));
  });
  void exited.then((code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
});
const pid = server.pid!;
// Pro accounts admit 10 in flight each (burst 61 a minute): one account per ten streams. Made on
// the server's SQLite file from this process, as the admin CLI would.
const keys: string[] = [];
{
  const store = sqliteStore(join(dir, 'tollgate.db'));
  for (let index = 0; index < Math.ceil(streams / 10); index++) {
    const account = await store.createAccount({ plan: 'pro' });
    await store.addCredits(account.id, 1_000_000_000);
    keys.push((await store.createKey(account.id, 'bench')).key);
  }
  await store.close();
}
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** Streams whose reply has started and not ended (on a loaded machine the last may start after the first ended). */
let open = 0;
let maxOpen = 0;

/** One streamed chat read to its end: its status and whether it ended with [DONE]. */
const stream = (key: string) =>
  new Promise<{ status: number; done: boolean }>((resolve) => {
    const body = JSON.stringify({ model: 'bench', stream: true, max_tokens: 64, messages: [{ role: 'user', content: prompt }] });
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
        open++;
        maxOpen = Math.max(maxOpen, open);
        reply.once('close', () => open--);
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
await Promise.all(keys.slice(0, 10).map((key) => stream(key)));
await sleep(2_000);
if (heapSnapshot) {
  // The idle snapshot, to subtract: written synchronously, so a stream served after it ends after it.
  server.kill('SIGUSR2');
  await stream(keys[0]!);
  await sleep(2_000);
}
const before = rssMb(pid);
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, rssMb(pid));
}, 100);
const started = performance.now();
// Halfway through the streams' 5 s every one of them is open: the heap snapshot is taken then.
const snapshot = heapSnapshot ? setTimeout(() => server.kill('SIGUSR2'), Math.min(2_500, dripMs * 10)) : undefined;
maxOpen = 0;
const results = await Promise.all(Array.from({ length: streams }, (_, index) => stream(keys[Math.floor(index / 10)]!)));
const seconds = (performance.now() - started) / 1000;
clearTimeout(snapshot);
peak = Math.max(peak, rssMb(pid));
await sleep(Math.min(5, afterS) * 1000);
const soon = rssMb(pid);
await sleep(Math.max(0, afterS - 5) * 1000);
clearInterval(sampler);
const after = rssMb(pid);
agent.destroy();
server.kill('SIGTERM');
const code = await exited;
await upstream.stop();
rmSync(dir, { recursive: true, force: true });

const failed = results.filter((result) => result.status !== 200 || !result.done).length;
console.log(
  JSON.stringify({
    server: [mode, ...extraNodeArgs].join(' '),
    streams,
    'drip ms': dripMs,
    seconds: Number(seconds.toFixed(1)),
    'most open at once': maxOpen,
    failed,
    [`RSS MB before / peak / 5 s after / ${afterS} s after`]: `${before.toFixed(0)} / ${peak.toFixed(0)} / ${soon.toFixed(0)} / ${after.toFixed(0)}`,
    'peak growth MB': Number((peak - before).toFixed(1)),
    'KB per open stream': Math.round(((peak - before) * 1024) / maxOpen),
    ...(heapSnapshot ? { 'heap snapshots': readdirSync(snapshotDir).map((name) => join('bench-heap', name)) } : {}),
  }),
);
if (code !== 0) process.stderr.write(`the server exited with ${code} on SIGTERM: ${stderr}\n`);
if (after - before > returnMb)
  process.stderr.write(`RSS ${afterS} s after the streams is ${(after - before).toFixed(0)} MB over its start (RSS_RETURN_MB ${returnMb})\n`);
if (failed > 0 || peak > limitMb || after - before > returnMb || code !== 0) process.exitCode = 1;
