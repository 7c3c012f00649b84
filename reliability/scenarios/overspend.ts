/**
 * Overspend: 200 concurrent requests on one account whose balance holds 3, on one instance or on
 * two instances sharing PostgreSQL + Redis. Proves the hold is taken atomically against what is
 * available: the holds open at any moment never add up to more than the balance, and the balance
 * never goes below zero (charges never pass their holds).
 */
import type { Backend } from '../harness/backend';
import { chatBody, costOf, holdOf, send, tally } from '../harness/client';
import { invariantChecks, readLedger, type Ledger } from '../harness/ledger';
import { check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild, type ServerChild } from '../harness/server-child';
import { catalogueEnv, createAccounts, removeDir, startUpstream, tempDir } from '../harness/world';

const MAX_TOKENS = 100;

/** The largest sum of holds open at one moment (from their open and close times). */
function peakHeld(ledger: Ledger, accountId: string): number {
  const events: [number, number][] = [];
  for (const hold of ledger.holds) {
    if (hold.account_id !== accountId) continue;
    events.push([hold.created_at, hold.micros], [hold.closed_at ?? Number.MAX_SAFE_INTEGER, -hold.micros]);
  }
  // A hold closed at the same millisecond another opens was released first only if its close sorts first.
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let peak = 0;
  for (const [, delta] of events) {
    open += delta;
    peak = Math.max(peak, open);
  }
  return peak;
}

export async function overspendScenario(size: Size, dir: string, backend: Backend, redisUrl?: string): Promise<ScenarioResult> {
  const requests = size === 'full' ? 200 : 100;
  const instances = redisUrl ? 2 : 1;
  const credits = 3 * holdOf(MAX_TOKENS);
  // Every admitted request stays in flight until all 200 were answered.
  const upstream = await startUpstream({ latencyMs: 2_000 });
  const env = { ...catalogueEnv(dir, [{ id: 'chat', baseURL: `${upstream.url}/v1` }]), ...backend.env, ...(redisUrl ? { REDIS_URL: redisUrl } : {}) };
  const store = backend.open();
  const [account] = await createAccounts(store, 1, 'max', credits);
  await store.close?.();
  const servers: ServerChild[] = [];
  const dirs: string[] = [];
  try {
    for (let index = 0; index < instances; index++) {
      const own = index === 0 ? dir : tempDir('overspend-b');
      if (index > 0) dirs.push(own);
      servers.push(await startServerChild({ ...env, TOLLGATE_DATA_DIR: own }));
    }
    const replies = await Promise.all(
      Array.from({ length: requests }, (_, index) =>
        send(servers[index % instances]?.url ?? '', account?.key ?? '', chatBody('chat', { maxTokens: MAX_TOKENS })),
      ),
    );
    const ledger = await readLedger(backend.target);
    const admitted = replies.filter((reply) => reply.status === 200);
    const expected = new Map<string, number>();
    for (const reply of admitted) if (reply.requestId && reply.usage) expected.set(reply.requestId, costOf(reply.usage));
    const balance = ledger.accounts.find((row) => row.id === account?.id)?.balance ?? Number.NaN;
    const peak = peakHeld(ledger, account?.id ?? '');
    const unexpected = replies.filter((reply) => ![200, 402, 429].includes(reply.status));
    return {
      scenario: `overspend (${instances === 2 ? `two instances, ${backend.kind} + Redis` : `one instance, ${backend.kind}`})`,
      figures: { requests, 'balance pays for': 3, admitted: admitted.length, replies: tally(replies), 'peak µ$ held': peak, 'balance after µ$': balance },
      checks: [
        check('no more admitted than the balance holds', admitted.length <= 3 && admitted.length >= 1, `${admitted.length} admitted`),
        check('holds open at once never above the balance', peak <= credits, `peak ${peak} of ${credits}`),
        check('the balance never below zero', balance >= 0, `${balance} µ$`),
        check('every refusal is 402 insufficient_balance or 429', unexpected.length === 0, tally(unexpected) || 'none'),
        ...invariantChecks(ledger, { expected }),
      ],
    };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await upstream.close();
    for (const each of [dir, ...dirs]) removeDir(each);
  }
}
