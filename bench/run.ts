/**
 * `npm run bench`: the gateway against a bare node:http proxy (same fake upstream, same run), the
 * strict JSON parser against JSON.parse, and the memory limiter's footprint.
 * `BENCH_SECONDS` sets the seconds per load run (default 5).
 */
import { runChatBench } from './chat-bench';
import { runParserBench } from './parser-bench';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);

const chat = await runChatBench({ seconds, connections: 32, ttfbSamples: 200 });
console.log('\nChat through the gateway vs a bare node:http pass-through proxy (same loopback fake upstream)\n');
console.table(chat.rows.map((row) => ({
  run: row.name,
  'req/s': Math.round(row.requestsPerSecond),
  'p50 ms': row.p50,
  'p99 ms': row.p99,
  errors: row.errors + row.non2xx,
})));
const ratio = (gateway: string, bare: string) => {
  const g = chat.rows.find((row) => row.name === gateway)!;
  const b = chat.rows.find((row) => row.name === bare)!;
  return { 'req/s ratio': (g.requestsPerSecond / b.requestsPerSecond).toFixed(2), 'p50 ratio': (g.p50 / Math.max(b.p50, 0.001)).toFixed(2), 'p99 ratio': (g.p99 / Math.max(b.p99, 0.001)).toFixed(2) };
};
console.log('\nGateway / bare ratios\n');
console.table({
  'non-streamed': ratio('gateway, non-streamed', 'bare proxy, non-streamed'),
  streamed: ratio('gateway, streamed', 'bare proxy, streamed'),
});
console.log('\nStreamed time to first byte (sequential requests)\n');
console.table({
  bare: { 'p50 ms': chat.ttfb.bare.p50.toFixed(2), 'p99 ms': chat.ttfb.bare.p99.toFixed(2) },
  gateway: { 'p50 ms': chat.ttfb.gateway.p50.toFixed(2), 'p99 ms': chat.ttfb.gateway.p99.toFixed(2) },
});

console.log('\nStrict JSON parser vs JSON.parse\n');
console.table(await runParserBench());
