/**
 * The reliability suite's short form (issue #20; docs/reliability.md): each scenario runs once
 * against the reference server in child processes, and each of its checks is one test. Checks
 * that wait for the gateway core's restructure (deadlines, aborts, crash checkpoints, the charge
 * capped at the hold) are skipped tests named for what they wait for; `npm run reliability`
 * still runs and reports them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresBackend, sqliteBackend } from './harness/backend';
import type { ScenarioResult } from './harness/result';
import { findPostgresBin, hasRedisServer, startKillableRedis, startPostgres, type KillableRedis, type PostgresServer } from './harness/services';
import { tempDir } from './harness/world';
import { crashScenario } from './scenarios/crash';
import { overspendScenario } from './scenarios/overspend';
import { sigtermScenario } from './scenarios/sigterm';

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

/**
 * One describe per scenario: the scenario runs once in beforeAll, each check is a test; a check
 * that waits for another fix is a skipped test carrying its name and what it waits for.
 */
function scenario(name: string, run: () => Promise<ScenarioResult>, checks: { expect: string[]; waiting?: string[] }, needsServices = false) {
  (needsServices && !servicesInstalled ? describe.skip : describe)(name, () => {
    let result: ScenarioResult;
    beforeAll(async () => {
      result = await run();
    }, 170_000);
    const find = (check: string) => {
      const found = result.checks.find((each) => each.name === check);
      if (!found) throw new Error(`${name}: no check named "${check}" (checks: ${result.checks.map((each) => each.name).join('; ')})`);
      return found;
    };
    it('runs every check it declares', () => {
      expect(result.checks.map((each) => each.name).sort()).toEqual([...checks.expect, ...(checks.waiting ?? [])].sort());
    });
    for (const name of checks.expect) {
      it(name, () => {
        const found = find(name);
        expect(found.ok, found.detail).toBe(true);
      });
    }
    for (const name of checks.waiting ?? []) {
      it.skip(`${name} — waits for the gateway core restructure (see docs/reliability.md)`, () => {
        const found = find(name);
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
  expect: [`${streams} streams in flight when killed`, 'requests settled before the crash charged exactly once', 'the restarted server serves', ...INVARIANT],
  waiting: ['each stream cut by the crash pays what it delivered, less at most 60 tokens (a checkpoint a second)'],
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
