/**
 * Test helper run as a separate process by sqlite-store.test.ts: opens the store on a file and
 * takes holds, printing how many micros it held, so holds from several processes can be summed.
 */
import { sqliteStore } from './sqlite-store';

const [path, accountId, count, micros] = process.argv.slice(2);
const store = sqliteStore(path!);
let held = 0;
for (let i = 0; i < Number(count); i++) {
  const result = await store.hold(accountId!, { micros: Number(micros), ttlMs: 60_000 });
  if (result.ok) held += result.micros;
}
await store.close();
process.stdout.write(JSON.stringify({ held }));
