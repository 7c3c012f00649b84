/**
 * The SQLite store's request path alone: `hold` then `settle` for every request, as the gateway
 * makes them under load (a batch of concurrent requests' holds in one turn, their settles in a
 * later one), on a temp file with 400 accounts and a key each. Prints the process's CPU µs per
 * request (hold + settle), the median of 5 rounds, as one JSON line.
 *
 * Run: npx tsx bench/store-path.ts [requests per round] [concurrent requests]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStore } from '../packages/store-sqlite/src/sqlite-store';
import { cpuRounds } from './cpu-rounds';

const REQUESTS = Number(process.argv[2] ?? 20_000);
const CONCURRENT = Number(process.argv[3] ?? 8);
const ACCOUNTS = 400;

const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-path-'));
const store = sqliteStore(join(dir, 'bench.db'));
const accounts: { id: string; keyId: string }[] = [];
for (let index = 0; index < ACCOUNTS; index++) {
  const { id } = await store.createAccount({ plan: 'pro' });
  await store.addCredits(id, 1_000_000_000_000);
  const key = await store.createKey(id, 'bench');
  accounts.push({ id, keyId: key.id });
}

let next = 0;
/** One request's money path: a hold, then (a turn later, as a stream's end is) its settle. */
const request = async () => {
  const { id, keyId } = accounts[next++ % ACCOUNTS] as { id: string; keyId: string };
  const held = await store.hold(id, { micros: 2_000, minimum: 1, ttlMs: 60_000, keyId, model: 'bench', requestId: `req_${next}` });
  if (!held.ok) throw new Error('hold refused');
  await new Promise((resolve) => setImmediate(resolve));
  await store.settle(held.value.holdId, { micros: 1_234, requestId: `req_${next}`, meta: { model: 'bench' }, promptTokens: 12, completionTokens: 20 });
};

const { median, rounds } = await cpuRounds(async () => {
  for (let done = 0; done < REQUESTS; done += CONCURRENT) await Promise.all(Array.from({ length: CONCURRENT }, request));
}, REQUESTS);
await store.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    requests: REQUESTS,
    concurrent: CONCURRENT,
    cpuMicrosPerRequest: Math.round(median),
    rounds: rounds.map(Math.round),
  }),
);
