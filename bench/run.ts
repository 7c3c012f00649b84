/**
 * `npm run bench`: the gateway against a bare node:http proxy (same fake upstream, same run), the
 * strict JSON parser against JSON.parse, and the memory limiter's footprint for 1,000,000 accounts.
 *
 * Environment: `BENCH_SECONDS` seconds per load run (default 5), `BENCH_CONNECTIONS` (default 32),
 * `BENCH_LIMITER_ACCOUNTS` (default 1000000), `BENCH_CPU_PROF=<dir>` writes a CPU profile of the
 * servers' process there.
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism, totalmem } from 'node:os';
import { runChatBench, type ChatRow } from './chat-bench';
import { runParserBench } from './parser-bench';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const limiterAccounts = process.env.BENCH_LIMITER_ACCOUNTS ?? '1000000';

console.log(
  `node ${process.version}, ${availableParallelism()} CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; ${seconds} s per run, ${connections} connections`,
);

const chat = await runChatBench({ seconds, connections, ttfbSamples: 200, cpuProfileDir: process.env.BENCH_CPU_PROF });
console.log('\nChat through the gateway vs a bare node:http pass-through proxy (same loopback fake upstream)\n');
console.table(
  Object.fromEntries(
    chat.rows.map((row) => [
      row.name,
      {
        'req/s': Math.round(row.requestsPerSecond),
        'p50 ms': row.p50,
        'p99 ms': row.p99,
        requests: row.requests,
        errors: row.errors,
        'non-2xx': row.non2xx,
        'CPU µs/req': row.cpuMicrosPerRequest === undefined ? '-' : Math.round(row.cpuMicrosPerRequest),
      },
    ]),
  ),
);

const find = (name: string): ChatRow => chat.rows.find((row) => row.name === name)!;
const ratio = (label: string) => {
  const g = find(`gateway, ${label}`);
  const b = find(`bare proxy, ${label}`);
  return {
    'req/s ratio': (g.requestsPerSecond / b.requestsPerSecond).toFixed(2),
    'p50 ratio': (g.p50 / Math.max(b.p50, 0.001)).toFixed(2),
    'p99 ratio': (g.p99 / Math.max(b.p99, 0.001)).toFixed(2),
    // The servers' CPU per request, bare over gateway: the gateway's own work, steadier than req/s on a busy machine.
    'CPU ratio': g.cpuMicrosPerRequest && b.cpuMicrosPerRequest ? (b.cpuMicrosPerRequest / g.cpuMicrosPerRequest).toFixed(2) : '-',
    // The same, as issue targets are stated: the gateway's CPU per request as a multiple of the bare proxy's.
    'CPU x bare': g.cpuMicrosPerRequest && b.cpuMicrosPerRequest ? (g.cpuMicrosPerRequest / b.cpuMicrosPerRequest).toFixed(2) : '-',
  };
};
console.log('\nGateway / bare ratios (req/s and CPU: higher is better; latency: lower is better; 1.00 = no overhead)\n');
console.table({ 'non-streamed': ratio('non-streamed'), streamed: ratio('streamed') });

console.log('\nStreamed time to first byte (sequential requests, one at a time)\n');
console.table({
  'bare proxy': { 'p50 ms': Number(chat.ttfb.bare.p50.toFixed(2)), 'p99 ms': Number(chat.ttfb.bare.p99.toFixed(2)) },
  gateway: { 'p50 ms': Number(chat.ttfb.gateway.p50.toFixed(2)), 'p99 ms': Number(chat.ttfb.gateway.p99.toFixed(2)) },
  'gateway over bare': {
    'p50 ms': Number((chat.ttfb.gateway.p50 - chat.ttfb.bare.p50).toFixed(2)),
    'p99 ms': Number((chat.ttfb.gateway.p99 - chat.ttfb.bare.p99).toFixed(2)),
  },
});

// A gateway run with refusals or errors measured something else than the hot path: say so loudly.
for (const row of chat.rows.filter((row) => row.name.startsWith('gateway'))) {
  if (row.errors + row.non2xx > 0) {
    console.error(`\n${row.name}: ${row.errors} errors and ${row.non2xx} non-2xx replies — the figures above are not valid`);
    process.exitCode = 1;
  }
  if (row.requestsPerSecond > chat.admittedPerSecond * 0.8) {
    console.error(
      `\n${row.name}: ${Math.round(row.requestsPerSecond)} req/s is close to the ${chat.admittedPerSecond} req/s the bench accounts' plans admit: raise the account count`,
    );
    process.exitCode = 1;
  }
}

console.log('\nStrict JSON parser (parseJsonStrict) vs JSON.parse on base64-heavy chat bodies\n');
console.table(
  Object.fromEntries(
    (await runParserBench()).map((row) => [
      row.body,
      {
        bytes: row.bytes,
        'strict MB/s': Math.round(row.strictMBps),
        'JSON.parse MB/s': Math.round(row.jsonParseMBps),
        'strict / JSON.parse': Number(row.ratio.toFixed(2)),
      },
    ]),
  ),
);

console.log('\nMemory limiter footprint (child process with --expose-gc)\n');
const memory = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/limiter-memory.ts', limiterAccounts], {
  cwd: new URL('..', import.meta.url),
  encoding: 'utf8',
});
console.log((memory.stdout + memory.stderr).trim());
