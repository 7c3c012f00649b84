/**
 * `npm run reliability`: every scenario of the reliability suite (issue #20, docs/reliability.md)
 * against the reference server in child processes, on loopback only, PostgreSQL and Redis started
 * and stopped here. Prints one table of figures and every check; exits 1 when a check fails that
 * waits for no other fix.
 *
 * Environment: `RELIABILITY_SIZE=short` for the CI sizes (default `full`), `RELIABILITY_ONLY=<a
 * scenario's file name>[,…]` to run some, `RELIABILITY_MAX_SECONDS` (default 1500) bounds the run.
 */
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { postgresBackend, sqliteBackend } from './harness/backend';
import type { ScenarioResult, Size } from './harness/result';
import { killAllServerChildren } from './harness/server-child';
import { startKillableRedis, startPostgres } from './harness/services';
import { tempDir } from './harness/world';
import { abusiveScenario } from './scenarios/abusive';
import { crashScenario } from './scenarios/crash';
import { fuzzScenario } from './scenarios/fuzz';
import { overspendScenario } from './scenarios/overspend';
import { postgresRestartScenario } from './scenarios/postgres-restart';
import { redisKillScenario } from './scenarios/redis-kill';
import { secretsScenario } from './scenarios/secrets';
import { sigtermScenario } from './scenarios/sigterm';
import { upstreamFaultsScenario } from './scenarios/upstream-faults';

const size: Size = process.env.RELIABILITY_SIZE === 'short' ? 'short' : 'full';
const only = process.env.RELIABILITY_ONLY?.split(',').filter(Boolean);
const maxSeconds = Number(process.env.RELIABILITY_MAX_SECONDS ?? 1_500);
const HOLD_TTL_MS = 2_000;

const bound = setTimeout(() => {
  console.error(`\nreliability: the run passed its bound of ${maxSeconds} s; stopping every server`);
  killAllServerChildren();
  process.exit(2);
}, maxSeconds * 1000);
bound.unref();

// The machine's facts, for the table in docs/reliability.md: the load others put on it counts too.
const machine = () =>
  `load average ${loadavg()
    .map((each) => each.toFixed(1))
    .join(' ')}`;
console.log(
  `${new Date().toISOString()}: node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB; ${size} run; ${machine()}`,
);
const [pg, redis] = await Promise.all([startPostgres(), startKillableRedis()]);
const results: ScenarioResult[] = [];
const scenarios: [string, () => Promise<ScenarioResult>][] = [
  ['crash', () => withDir('crash', (dir) => crashScenario(size, dir, sqliteBackend(dir), HOLD_TTL_MS))],
  ['crash-postgres', () => withDir('crash-pg', async (dir) => crashScenario(size, dir, await postgresBackend(pg, HOLD_TTL_MS), HOLD_TTL_MS))],
  ['sigterm', () => withDir('sigterm', (dir) => sigtermScenario(size, dir, sqliteBackend(dir)))],
  ['overspend', () => withDir('overspend', (dir) => overspendScenario(size, dir, sqliteBackend(dir)))],
  ['overspend-two', () => withDir('overspend-two', async (dir) => overspendScenario(size, dir, await postgresBackend(pg, HOLD_TTL_MS), redis.url))],
  ['fuzz', () => withDir('fuzz', (dir) => fuzzScenario(size, dir, sqliteBackend(dir)))],
  ['abusive', () => withDir('abusive', (dir) => abusiveScenario(size, dir, sqliteBackend(dir)))],
  ['upstream-faults', () => withDir('faults', (dir) => upstreamFaultsScenario(size, dir, sqliteBackend(dir)))],
  ['redis-kill', () => withDir('redis', async (dir) => redisKillScenario(size, dir, await postgresBackend(pg, HOLD_TTL_MS), redis))],
  [
    'postgres-restart',
    () =>
      withDir('pg-restart', async (dir) => {
        const backend = await postgresBackend(pg, HOLD_TTL_MS);
        return postgresRestartScenario(size, dir, { ...backend, kind: 'postgres' }, pg.url);
      }),
  ],
  ['secrets', async () => secretsScenario()],
];

try {
  for (const [name, run] of scenarios) {
    if (only && !only.includes(name)) continue;
    const started = performance.now();
    process.stdout.write(`${name} … `);
    try {
      const result = await run();
      result.figures.seconds = Math.round((performance.now() - started) / 1000);
      results.push(result);
      console.log(`${result.checks.filter((each) => each.ok).length}/${result.checks.length} checks hold (${result.figures.seconds} s)`);
    } catch (error) {
      console.log('failed to run');
      results.push({ scenario: name, figures: {}, checks: [{ name: 'the scenario runs', ok: false, detail: String((error as Error)?.stack ?? error) }] });
    }
  }
} finally {
  killAllServerChildren();
  await Promise.all([pg.stop(), redis.stop()]);
}

console.log(`\n${new Date().toISOString()}: done; ${machine()}`);
console.log('\n| scenario | figures | checks |\n| --- | --- | --- |');
for (const result of results) {
  const figures = Object.entries(result.figures)
    .map(([name, value]) => `${name}: ${value}`)
    .join('; ');
  const held = result.checks.filter((each) => each.ok).length;
  const waiting = result.checks.filter((each) => !each.ok && each.waitsFor).length;
  console.log(`| ${result.scenario} | ${figures} | ${held}/${result.checks.length} hold${waiting ? `, ${waiting} wait for a fix` : ''} |`);
}

let failed = 0;
console.log('\nChecks');
for (const result of results) {
  for (const each of result.checks) {
    const mark = each.ok ? 'ok  ' : each.waitsFor ? 'WAIT' : each.reportedOnly ? 'NOTE' : 'FAIL';
    if (!each.ok && !each.waitsFor && !each.reportedOnly) failed++;
    console.log(`${mark} ${result.scenario}: ${each.name} — ${each.detail}${!each.ok && each.waitsFor ? ` [waits for: ${each.waitsFor}]` : ''}`);
  }
}
console.log(
  `\n${failed === 0 ? 'No check failed' : `${failed} checks failed`} (WAIT: waits for a library fix; NOTE: a figure reported only, such as latency).`,
);
process.exitCode = failed === 0 ? 0 : 1;

async function withDir(prefix: string, run: (dir: string) => Promise<ScenarioResult>): Promise<ScenarioResult> {
  return run(tempDir(prefix));
}
