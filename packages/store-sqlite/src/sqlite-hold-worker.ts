/**
 * Test helper run as a separate process by sqlite-store.test.ts and sqlite-runtimes.test.ts, on
 * Node, Bun or Deno: opens the store on a file with the runtime's own driver and takes holds,
 * printing how many micros it held and with which driver, so holds from several processes (and
 * runtimes) on one file can be summed. An optional fifth argument is the key the holds name (its
 * budget then limits them too).
 */
import { runtimeDriver } from './runtime-driver';
import { sqliteStore } from './sqlite-store';

const [path, accountId, count, micros, keyId] = process.argv.slice(2);
if (path === undefined || accountId === undefined) throw new Error('usage: sqlite-hold-worker <path> <accountId> <count> <micros> [keyId]');
const driver = runtimeDriver();
const store = sqliteStore(path, { driver });
let held = 0;
for (let i = 0; i < Number(count); i++) {
  const result = await store.hold(accountId, { micros: Number(micros), ttlMs: 60_000, ...(keyId === undefined ? {} : { keyId }) });
  if (result.ok) held += result.value.micros;
}
await store.close();
process.stdout.write(JSON.stringify({ held, driver: driver.name }));
