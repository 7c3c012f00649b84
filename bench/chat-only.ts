/**
 * The chat comparison alone, one line per run, for before/after measurements in one sitting:
 * `npx tsx bench/chat-only.ts [label]` (BENCH_SECONDS, BENCH_CONNECTIONS as for `npm run bench`).
 */
import { runChatBench } from './chat-bench';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const label = process.argv[2] ?? '';
const { rows, ttfb } = await runChatBench({ seconds, connections, ttfbSamples: 200 });
const rate = (name: string) => rows.find((row) => row.name === name)!.requestsPerSecond;
const cpu = (name: string) => rows.find((row) => row.name === name)!.cpuMicrosPerRequest ?? Number.NaN;
const bad = rows.filter((row) => row.errors + row.non2xx + row.timeouts > 0).map((row) => row.name);
console.log(
  JSON.stringify({
    label,
    rps: Object.fromEntries(rows.map((row) => [row.name, Math.round(row.requestsPerSecond)])),
    ratio: {
      'non-streamed': Number((rate('gateway, non-streamed') / rate('bare proxy, non-streamed')).toFixed(3)),
      streamed: Number((rate('gateway, streamed') / rate('bare proxy, streamed')).toFixed(3)),
    },
    cpuMicrosPerRequest: Object.fromEntries(rows.map((row) => [row.name, Math.round(row.cpuMicrosPerRequest ?? Number.NaN)])),
    p99: Object.fromEntries(rows.map((row) => [row.name, row.p99])),
    cpuRatio: {
      'non-streamed': Number((cpu('bare proxy, non-streamed') / cpu('gateway, non-streamed')).toFixed(3)),
      streamed: Number((cpu('bare proxy, streamed') / cpu('gateway, streamed')).toFixed(3)),
    },
    cpuTimesBare: {
      'non-streamed': Number((cpu('gateway, non-streamed') / cpu('bare proxy, non-streamed')).toFixed(2)),
      streamed: Number((cpu('gateway, streamed') / cpu('bare proxy, streamed')).toFixed(2)),
    },
    ttfbP50: { bare: Number(ttfb.bare.p50.toFixed(2)), gateway: Number(ttfb.gateway.p50.toFixed(2)) },
    ttfbOverBare: { p50: Number((ttfb.gateway.p50 - ttfb.bare.p50).toFixed(2)), p99: Number((ttfb.gateway.p99 - ttfb.bare.p99).toFixed(2)) },
    invalid: bad,
  }),
);
