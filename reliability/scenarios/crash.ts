/**
 * Crash: streams in flight, `kill -9` the server, restart on the same ledger. Proves that the
 * crash loses no money the ledger already holds: balance = sum of entries, requests settled before
 * the crash are not charged again, the dead process's holds are released at restart (SQLite: at
 * once; PostgreSQL: once their TTL passed), and measures what the cut streams were charged
 * against what they delivered (the spec's rule 3).
 */
import { chargesByRequest, invariantChecks, readLedger } from '../harness/ledger';
import type { Backend } from '../harness/backend';
import { chatBody, costOf, send, waitFor, type Reply } from '../harness/client';
import { check, type ScenarioResult, type Size } from '../harness/result';
import { startServerChild } from '../harness/server-child';
import { catalogueEnv, createAccounts, removeDir, startUpstream } from '../harness/world';

/** Pro accounts take 10 streams each. */
const PER_ACCOUNT = 10;
/** The most a crash may lose per cut stream once checkpoints land: about a second of delivered tokens (the drip below sends ~50/s). */
const CHECKPOINT_TOKENS = 60;
/** Chunks every stream has delivered before the kill: well past one checkpoint interval. */
const MIN_DELIVERED = 120;

export async function crashScenario(size: Size, dir: string, backend: Backend, holdTtlMs: number): Promise<ScenarioResult> {
  const streams = size === 'full' ? 50 : 20;
  const upstream = await startUpstream({ reply: 'word '.repeat(400).trim(), faults: () => ({ kind: 'drip', delayMs: 20 }) });
  const env = { ...catalogueEnv(dir, [{ id: 'chat', baseURL: `${upstream.url}/v1` }]), ...backend.env };
  const store = backend.open();
  const accounts = await createAccounts(store, Math.ceil(streams / PER_ACCOUNT) + 1, 'pro', 10_000_000);
  await store.close?.();
  let server = await startServerChild(env);
  try {
    // Settled before the crash: must stay charged exactly once.
    const before: Reply[] = [];
    for (let index = 0; index < 10; index++) before.push(await send(server.url, accounts[0]?.key ?? '', chatBody('chat', { maxTokens: 50, content: 'quick' })));
    const delivered: number[] = Array.from({ length: streams }, () => 0);
    const running = Array.from({ length: streams }, (_, index) => {
      const account = accounts[1 + Math.floor(index / PER_ACCOUNT)];
      return send(server.url, account?.key ?? '', chatBody('chat', { stream: true, maxTokens: 500 }), { onChunk: (count) => (delivered[index] = count) });
    });
    const flowing = await waitFor(() => delivered.every((count) => count >= MIN_DELIVERED), 60_000);
    server.child.kill('SIGKILL');
    await server.exited;
    const cut = await Promise.all(running);
    const deliveredTokens = cut.reduce((sum, reply) => sum + reply.chunks, 0);

    const restartStarted = performance.now();
    // PostgreSQL: a dead instance's holds expire after their TTL; the restart releases expired ones.
    if (backend.kind === 'postgres') await new Promise((resolve) => setTimeout(resolve, holdTtlMs + 200));
    server = await startServerChild(env);
    const restartMs = Math.round(performance.now() - restartStarted);
    const after = await send(server.url, accounts[0]?.key ?? '', chatBody('chat', { maxTokens: 50 }));
    const ledger = await readLedger(backend.target);
    const charged = chargesByRequest(ledger);
    const expected = new Map<string, number>();
    for (const reply of [...before, after]) if (reply.status === 200 && reply.requestId && reply.usage) expected.set(reply.requestId, costOf(reply.usage));
    const cutCharges = cut.map((reply) => (reply.requestId ? (charged.get(reply.requestId)?.micros ?? 0) : 0));
    const cutCharged = cutCharges.reduce((sum, micros) => sum + micros, 0);
    // Each cut stream: prompt (1 token) + its delivered words, less at most the checkpoint interval's worth.
    const underCharged = cut.filter((reply, index) => (cutCharges[index] ?? 0) < reply.chunks + 1 - CHECKPOINT_TOKENS).length;
    return {
      scenario: `crash (kill -9, ${backend.kind})`,
      figures: {
        'streams cut': cut.filter((reply) => !reply.done).length,
        'chunks delivered before kill': deliveredTokens,
        'µ$ charged for cut streams': cutCharged,
        'settled before crash': before.filter((reply) => reply.status === 200).length,
        'restart ms': restartMs,
        'holds open after restart': ledger.holds.filter((hold) => hold.state === 'open').length,
      },
      checks: [
        check(
          `${streams} streams in flight when killed`,
          flowing && cut.every((reply) => reply.status === 200 && !reply.done),
          `${deliveredTokens} chunks delivered`,
        ),
        check(
          'requests settled before the crash charged exactly once',
          before.every((reply) => reply.status === 200),
          `${before.length} replies`,
        ),
        check('the restarted server serves', after.status === 200, `status ${after.status}`),
        ...invariantChecks(ledger, { expected }),
        check(
          `each stream cut by the crash pays what it delivered, less at most ${CHECKPOINT_TOKENS} tokens (a checkpoint a second)`,
          underCharged === 0,
          `${underCharged} of ${cut.length} under-charged: ${cutCharged} µ$ charged for ${deliveredTokens} delivered tokens`,
        ),
      ],
    };
  } finally {
    server.child.kill('SIGKILL');
    await server.exited;
    await upstream.close();
    removeDir(dir);
  }
}
