/**
 * Profiles the reference server under load: one autocannon run against the gateway only, with the
 * servers' process writing a V8 CPU profile. Read the top frames with any .cpuprofile viewer
 * (Chrome DevTools, speedscope).
 *
 * Run: `npx tsx bench/profile-gateway.ts [streamed|non-streamed] [seconds] [profile dir]`.
 * `BENCH_PROFILE_TARGET=bare` loads the bare proxy of the same process instead (its profile, to
 * read the gateway's beside); `BENCH_MONEY=off` as for bench/bench-servers-process.ts.
 */
import autocannon from 'autocannon';
import { SERVERS_BUNDLED, startChild } from './start-child';
import { startScript } from './start-script';

const stream = (process.argv[2] ?? 'streamed') === 'streamed';
const seconds = Number(process.argv[3] ?? 5);
const dir = process.argv[4] ?? 'bench-profiles';

const upstream = await startChild<{ url: string }>('bench/fake-upstream-process.ts');
const servers = await startChild<{ gateway: string; bare: string; keys: string[] }>(
  'bench/bench-servers-process.ts',
  [upstream.info.url, '1000'],
  [...startScript().nodeFlags, '--cpu-prof', `--cpu-prof-dir=${dir}`],
  { bundled: SERVERS_BUNDLED },
);
let next = 0;
const result = await autocannon({
  url: `${process.env.BENCH_PROFILE_TARGET === 'bare' ? servers.info.bare : servers.info.gateway}/v1/chat/completions`,
  method: 'POST',
  connections: 32,
  duration: seconds,
  body: JSON.stringify({ model: 'bench', stream, max_tokens: 64, messages: [{ role: 'user', content: 'Benchmark me, please.' }] }),
  headers: { 'content-type': 'application/json' },
  requests: [
    {
      setupRequest: (request) => ({
        ...request,
        headers: { ...request.headers, authorization: `Bearer ${servers.info.keys[next++ % servers.info.keys.length]}` },
      }),
    },
  ],
});
await servers.stop();
await upstream.stop();
console.log(
  `${stream ? 'streamed' : 'non-streamed'}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, ` +
    `p99 ${result.latency.p99} ms, ${result.errors} errors, ${result.non2xx} non-2xx; profile in ${dir}/`,
);
