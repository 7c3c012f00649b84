/**
 * Redis killed mid-load under two instances sharing PostgreSQL + Redis, one with
 * onLimiterError=closed and one with open: while Redis is down the closed instance refuses with
 * 503 service_unavailable and the open one admits; no request hangs; both recover by themselves
 * within seconds of Redis returning; the ledger stays exact.
 */
import type { Backend } from '../harness/backend';
import { costOf, tally, waitFor } from '../harness/client';
import { invariantChecks, readLedger } from '../harness/ledger';
import { startLoad, within } from '../harness/load';
import { check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild, type ServerChild } from '../harness/server-child';
import type { KillableRedis } from '../harness/services';
import { catalogueEnv, createAccounts, removeDir, startUpstream, tempDir } from '../harness/world';

export async function redisKillScenario(size: Size, dir: string, backend: Backend, redis: KillableRedis): Promise<ScenarioResult> {
  const downMs = size === 'full' ? 10_000 : 3_000;
  const upstream = await startUpstream();
  const env = { ...catalogueEnv(dir, [{ id: 'chat', baseURL: `${upstream.url}/v1` }]), ...backend.env, REDIS_URL: redis.url };
  const store = backend.open();
  const accounts = await createAccounts(store, 8, 'max', 1_000_000_000);
  await store.close?.();
  const dirB = tempDir('redis-b');
  const servers: ServerChild[] = [];
  try {
    servers.push(await startServerChild({ ...env, TOLLGATE_LIMITER_ON_ERROR: 'closed' }));
    servers.push(await startServerChild({ ...env, TOLLGATE_DATA_DIR: dirB, TOLLGATE_LIMITER_ON_ERROR: 'open' }));
    const load = startLoad(
      servers.map((server) => server.url),
      accounts.map((account) => account.key),
    );
    await waitFor(() => load.samples.filter((sample) => sample.reply.status === 200).length >= 20, 30_000);
    const killedAt = performance.now();
    await redis.kill();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    const backAt = performance.now();
    await redis.start();
    // Recovered: each instance has answered 200 to a request that started after Redis came back.
    const recovered = [0, 1].map(() => Number.NaN);
    await waitFor(() => {
      for (const server of [0, 1]) {
        const first = load.samples.find((sample) => sample.server === server && sample.startedAt >= backAt && sample.reply.status === 200);
        if (first && Number.isNaN(recovered[server])) recovered[server] = first.endedAt - backAt;
      }
      return recovered.every((ms) => !Number.isNaN(ms));
    }, 30_000);
    const samples = await load.stop();
    // Requests wholly inside the outage (a margin for the drop to be seen).
    const closedDown = within(samples, killedAt + 500, backAt, 0);
    const openDown = within(samples, killedAt + 500, backAt, 1);
    const longest = Math.max(...samples.map((sample) => sample.reply.ms));
    const ledger = await readLedger(backend.target);
    const expected = new Map<string, number>();
    for (const { reply } of samples) if (reply.status === 200 && reply.requestId && reply.usage) expected.set(reply.requestId, costOf(reply.usage));
    return {
      scenario: 'Redis killed mid-load (two instances)',
      figures: {
        'Redis down ms': downMs,
        requests: samples.length,
        'closed instance while down': tally(closedDown.map((sample) => sample.reply)),
        'open instance while down': tally(openDown.map((sample) => sample.reply)),
        'recovery ms (closed / open)': recovered.map((ms) => Math.round(ms)).join(' / '),
        'longest request ms': Math.round(longest),
      },
      checks: [
        check(
          'onLimiterError closed: 503 service_unavailable while Redis is down',
          closedDown.length > 0 && closedDown.every((sample) => sample.reply.status === 503 && sample.reply.code === 'service_unavailable'),
          tally(closedDown.map((sample) => sample.reply)) || 'no request inside the outage',
        ),
        check(
          'onLimiterError open: admitted while Redis is down',
          openDown.length > 0 && openDown.every((sample) => sample.reply.status === 200),
          tally(openDown.map((sample) => sample.reply)) || 'no request inside the outage',
        ),
        check(
          'no request hangs (each ends within 10 s)',
          longest < 10_000 && samples.every((sample) => !sample.reply.failed),
          `longest ${Math.round(longest)} ms`,
        ),
        check(
          'both instances recover by themselves once Redis is back',
          recovered.every((ms) => Number.isFinite(ms)),
          `first 200 after ${recovered.map((ms) => Math.round(ms)).join(' / ')} ms`,
        ),
        ...invariantChecks(ledger, { expected }),
      ],
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop(5_000)));
    await upstream.close();
    removeDir(dir);
    removeDir(dirB);
  }
}
