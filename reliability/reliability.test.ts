/**
 * The reliability suite's short form (issue #20; docs/reliability.md): each scenario runs once
 * against the reference server in child processes, and each of its checks is one test. A check
 * that waits for a library fix not landed yet (a check with `waitsFor`, harness/result.ts) is a skipped test
 * named for what it waits on; latency comparisons are only reported, as a loaded machine would
 * flake them. `npm run reliability` runs and reports everything, at full size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBackend, sqliteBackend } from './harness/backend';
import type { ScenarioResult } from './harness/result';
import { findPostgresBin, hasRedisServer, startKillableRedis, startPostgres, type KillableRedis, type PostgresServer } from './harness/services';
import { tempDir } from './harness/world';
import { abusiveScenario } from './scenarios/abusive';
import { crashScenario } from './scenarios/crash';
import { fuzzScenario } from './scenarios/fuzz';
import { overspendScenario } from './scenarios/overspend';
import { postgresRestartScenario } from './scenarios/postgres-restart';
import { redisKillScenario } from './scenarios/redis-kill';
import { secretsScenario } from './scenarios/secrets';
import { sigtermScenario } from './scenarios/sigterm';
import { upstreamFaultCheckNames, upstreamFaultsScenario } from './scenarios/upstream-faults';

const HOLD_TTL_MS = 2_000;
const servicesInstalled = findPostgresBin() !== undefined && hasRedisServer();
if (!servicesInstalled && process.env.CI === 'true') throw new Error('PostgreSQL or redis-server is not installed: the reliability suite needs both in CI');

let pg: PostgresServer | undefined;
let redis: KillableRedis | undefined;

beforeAll(async () => {
  if (servicesInstalled) [pg, redis] = await Promise.all([startPostgres(), startKillableRedis()]);
}, 120_000);

afterAll(async () => {
  await Promise.all([pg?.stop(), redis?.stop()]);
}, 60_000);

/** Check names a scenario declares: those that must hold, those waiting for a fix (name -> what it waits on), those only reported. */
interface Declared {
  expect: string[];
  waiting?: Record<string, string>;
  reported?: string[];
}

/**
 * One describe per scenario: the scenario runs once in beforeAll, each check is a test; a check
 * that waits for another fix is a skipped test carrying its name and what it waits for.
 */
function scenario(name: string, run: () => Promise<ScenarioResult>, checks: Declared, needsServices = false) {
  (needsServices && !servicesInstalled ? describe.skip : describe)(name, () => {
    let result: ScenarioResult;
    beforeAll(async () => {
      result = await run();
      // The figures, for whoever reads a CI log (the checks follow as tests).
      console.log(`${result.scenario}: ${JSON.stringify(result.figures)}`);
    }, 170_000);
    const find = (check: string) => {
      const found = result.checks.find((each) => each.name === check);
      if (!found) throw new Error(`${name}: no check named "${check}" (checks: ${result.checks.map((each) => each.name).join('; ')})`);
      return found;
    };
    const waiting = Object.entries(checks.waiting ?? {});
    it('runs every check it declares', () => {
      expect(result.checks.map((each) => each.name).sort()).toEqual([...checks.expect, ...waiting.map(([check]) => check), ...(checks.reported ?? [])].sort());
    });
    for (const check of checks.expect) {
      it(check, () => {
        const found = find(check);
        expect(found.ok, found.detail).toBe(true);
      });
    }
    for (const [check, waitsFor] of waiting) {
      it.skip(`${check} — waits for ${waitsFor}`, () => {
        const found = find(check);
        expect(found.ok, found.detail).toBe(true);
      });
    }
  });
}

const INVARIANT = [
  'balance = sum of ledger entries, every account',
  'no hold left open once its request ended',
  'no request charged twice',
  'no charge above its hold',
  'every request that reached the model charged exactly its usage',
];

const crashChecks = (streams: number) => ({
  expect: [
    `${streams} streams in flight when killed`,
    'requests settled before the crash charged exactly once',
    'the restarted server serves',
    'each stream cut by the crash pays what it delivered, less at most 60 tokens (a checkpoint a second)',
    ...INVARIANT,
  ],
});

scenario(
  'crash: kill -9 under streams, restart on the same SQLite file',
  () => {
    const dir = tempDir('crash');
    return crashScenario('short', dir, sqliteBackend(dir), HOLD_TTL_MS);
  },
  crashChecks(20),
);

scenario(
  'crash: kill -9 under streams, restart on the same PostgreSQL database',
  async () => {
    const dir = tempDir('crash-pg');
    return crashScenario('short', dir, await postgresBackend(pg as PostgresServer, HOLD_TTL_MS), HOLD_TTL_MS);
  },
  crashChecks(20),
  true,
);

scenario(
  'SIGTERM during streams',
  () => {
    const dir = tempDir('sigterm');
    return sigtermScenario('short', dir, sqliteBackend(dir));
  },
  {
    expect: ['no new connection accepted after SIGTERM', 'every stream in flight finished with [DONE] within the grace period', 'exit code 0', ...INVARIANT],
  },
);

const overspendChecks = {
  expect: [
    'no more admitted than the balance holds',
    'holds open at once never above the balance',
    'the balance never below zero',
    'every refusal is 402 insufficient_balance or 429',
    ...INVARIANT,
  ],
};

scenario(
  'overspend: concurrent requests on a balance for 3, one instance on SQLite',
  () => {
    const dir = tempDir('overspend');
    return overspendScenario('short', dir, sqliteBackend(dir));
  },
  overspendChecks,
);

scenario(
  'overspend: concurrent requests on a balance for 3, two instances on PostgreSQL + Redis',
  async () => {
    const dir = tempDir('overspend-two');
    return overspendScenario('short', dir, await postgresBackend(pg as PostgresServer, HOLD_TTL_MS), (redis as KillableRedis).url);
  },
  overspendChecks,
  true,
);

scenario(
  'fuzz: generated hostile requests over raw sockets',
  () => {
    const dir = tempDir('fuzz');
    return fuzzScenario('short', dir, sqliteBackend(dir));
  },
  {
    expect: [
      "1000 generated requests, every reply per the spec's catalogue",
      'no 500',
      'the replies the first torture run found wrong are right (empty model, Content-Encoding, unknown method, malformed line, 431)',
      'the server still serves after the fuzz',
      'RSS after is back near RSS before (within 64 MB)',
    ],
  },
);

scenario(
  'abusive clients: slowloris, endless bodies, stalled streams, idle keep-alive',
  () => {
    const dir = tempDir('abusive');
    return abusiveScenario('short', dir, sqliteBackend(dir));
  },
  {
    expect: [
      'the stalled streams were admitted (10 per account)',
      'back-pressure reaches the upstream: a stalled stream never makes it send the whole reply',
      'the normal client is served throughout',
      'the server survived',
      'every stalled stream’s hold is released once its client left',
      'a stream stalled past the stall limit (15 s) is cut, its slot freed, charged what was delivered',
      ...INVARIANT.filter((name) => name !== 'no hold left open once its request ended' && !name.startsWith('every request')),
    ],

    reported: [
      'the normal client’s p99 under abuse stays within 2x its idle p99',
      'a stalled stream costs the gateway a small bounded buffer (at most 1 MB of RSS)',
    ],
  },
);

scenario(
  'upstream faults, each from a fake',
  () => {
    const dir = tempDir('faults');
    return upstreamFaultsScenario('short', dir, sqliteBackend(dir));
  },
  upstreamFaultCheckNames(),
);

scenario(
  'Redis killed mid-load under two instances (onLimiterError closed and open)',
  async () => {
    const dir = tempDir('redis');
    return redisKillScenario('short', dir, await postgresBackend(pg as PostgresServer, HOLD_TTL_MS), redis as KillableRedis);
  },
  {
    expect: [
      'onLimiterError closed: 503 service_unavailable while Redis is down',
      'onLimiterError open: admitted while Redis is down',
      'no request hangs (each ends within 10 s)',
      'both instances recover by themselves once Redis is back',
      ...INVARIANT,
    ],
  },
  true,
);

scenario(
  'PostgreSQL restarted mid-load',
  async () => {
    const dir = tempDir('pg-restart');
    const backend = await postgresBackend(pg as PostgresServer, HOLD_TTL_MS);
    return postgresRestartScenario('short', dir, { ...backend, kind: 'postgres' }, (pg as PostgresServer).url);
  },
  {
    expect: [
      'every refusal is the spec’s 503 service_unavailable',
      'no request hangs (each ends within 10 s)',
      'the server stays up',
      'recovers without a restart',
      'no hold left open once its request ended, but those logged "settlement failed: charge by hand"',
      ...INVARIANT.filter((name) => name !== 'no hold left open once its request ended'),
    ],
  },
  true,
);

// Last: it scans what every scenario above produced.
scenario('secrets: every log line, reply and /metrics output', async () => secretsScenario(), {
  expect: ['logs, replies and /metrics hold no key, key hash, upstream credential or Authorization header', 'the scan saw logs, replies and /metrics'],
});
