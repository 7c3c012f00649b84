/**
 * Chat through the reference server versus a bare node:http pass-through proxy, both in front of
 * the same loopback fake upstream, measured in one run with autocannon. The upstream and the two
 * servers run in child processes, so the load generator (this process) and the fake upstream do
 * not share an event loop with what is measured.
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { SERVERS_BUNDLED, startChild } from './start-child';
import { startScript } from './start-script';

/** One measured row. */
export interface ChatRow {
  name: string;
  requestsPerSecond: number;
  /** Latency percentiles in milliseconds. */
  p50: number;
  p99: number;
  /** Requests completed in the run. */
  requests: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /**
   * CPU time (user + system) the servers' process spent per completed request, in microseconds;
   * undefined where /proc is not available. Unlike req/s it hardly depends on what else the
   * machine runs, so the gateway/bare ratio of this figure is the steadier overhead measure.
   */
  cpuMicrosPerRequest?: number;
}

/** Options of {@link runChatBench}. */
export interface ChatBenchOptions {
  /** Seconds per autocannon run. */
  seconds: number;
  connections: number;
  /** Sequential streamed requests for the time-to-first-byte figure. */
  ttfbSamples: number;
  /** Pro accounts the gateway load is spread over (default 1,000). */
  accounts?: number;
  /** Writes a V8 CPU profile of the servers' process into this directory. */
  cpuProfileDir?: string;
}

/** Time to first byte of streamed replies, in milliseconds. */
export interface Ttfb {
  p50: number;
  p99: number;
}

/** What {@link runChatBench} measured. */
export interface ChatBenchResult {
  rows: ChatRow[];
  ttfb: { bare: Ttfb; gateway: Ttfb };
  /** Sustained requests a second the plans admit over all bench accounts (pro: 10 each). */
  admittedPerSecond: number;
}

const PRO_REQUESTS_PER_SECOND = 10;
const UPSTREAM_KEY = 'bench-upstream-key';

/**
 * The whole comparison: non-streamed, streamed, and streamed time to first byte.
 *
 * @example
 * const { rows, ttfb } = await runChatBench({ seconds: 5, connections: 32, ttfbSamples: 200 });
 */
export async function runChatBench(options: ChatBenchOptions): Promise<ChatBenchResult> {
  const accounts = options.accounts ?? 1_000;
  const upstream = await startChild<{ url: string }>('bench/fake-upstream-process.ts');
  try {
    const servers = await startChild<{ gateway: string; bare: string; keys: string[] }>(
      'bench/bench-servers-process.ts',
      [upstream.info.url, String(accounts)],
      // The node flags of `npm start` (the reference server's), so both servers run as it runs.
      [...startScript().nodeFlags, ...(options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [])],
      // Bundled, as `npm start` runs the server (no tsx loader, no `__name` per closure).
      { bundled: SERVERS_BUNDLED },
    );
    try {
      const { gateway, bare, keys } = servers.info;
      const roundRobin = () => {
        let next = 0;
        return () => keys[next++ % keys.length]!;
      };
      const body = (stream: boolean) =>
        JSON.stringify({ model: 'bench', stream, max_tokens: 64, messages: [{ role: 'user', content: 'Benchmark me, please.' }] });
      const rows: ChatRow[] = [];
      for (const stream of [false, true]) {
        const label = stream ? 'streamed' : 'non-streamed';
        const measured = async (name: string, url: string, key: () => string) => {
          const before = cpuMicros(servers.pid);
          const row = await cannon(name, url, body(stream), key, options);
          const after = cpuMicros(servers.pid);
          if (before !== undefined && after !== undefined && row.requests > 0) row.cpuMicrosPerRequest = (after - before) / row.requests;
          return row;
        };
        rows.push(await measured(`bare proxy, ${label}`, `${bare}/v1/chat/completions`, () => UPSTREAM_KEY));
        rows.push(await measured(`gateway, ${label}`, `${gateway}/v1/chat/completions`, roundRobin()));
      }
      const ttfb = {
        bare: await timeToFirstByte(`${bare}/v1/chat/completions`, body(true), () => UPSTREAM_KEY, options.ttfbSamples),
        gateway: await timeToFirstByte(`${gateway}/v1/chat/completions`, body(true), roundRobin(), options.ttfbSamples),
      };
      return { rows, ttfb, admittedPerSecond: accounts * PRO_REQUESTS_PER_SECOND };
    } finally {
      await servers.stop();
    }
  } finally {
    await upstream.stop();
  }
}

/** User + system CPU time of a process in microseconds, from /proc (Linux); undefined elsewhere. */
function cpuMicros(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

// USER_HZ: 100 on every mainstream Linux build (getconf CLK_TCK).
const CLOCK_TICKS = 100;

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
    requests: result.requests.total,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
  };
}

async function timeToFirstByte(url: string, body: string, key: () => string, samples: number): Promise<Ttfb> {
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key()}` }, body });
    if (response.status !== 200) throw new Error(`time to first byte: ${url} answered ${response.status}`);
    const reader = response.body!.getReader();
    await reader.read();
    times.push(performance.now() - started);
    while (!(await reader.read()).done);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)]!, p99: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]! };
}
