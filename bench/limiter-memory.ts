/**
 * Drives 1,000,000 distinct accounts through createLimiter + memoryLimiter (admit, acquire,
 * release, the clock moving 1 ms per account) and prints the heap before and after: the memory
 * store's footprint must stay bounded by `maxKeys`, not grow with the number of accounts.
 *
 * Run: node --expose-gc --import tsx bench/limiter-memory.ts [accounts]
 */
import { createLimiter, memoryLimiter } from '@tollgate/limiter';

const accounts = Number(process.argv[2] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
const heapMiB = () => {
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

let time = 1_700_000_000_000;
const store = memoryLimiter();
const limiter = createLimiter({ store, now: () => time });
const before = heapMiB();
const started = performance.now();
let refused = 0;
for (let i = 0; i < accounts; i++) {
  time += 1;
  const account = { id: `acc_${i.toString(36).padStart(20, '0')}`, plan: 'free' as const };
  const admitted = await limiter.admit(account, i % 3 === 0 ? 'search' : 'chat');
  if (!admitted.ok) refused++;
  const slot = await limiter.acquire(account, 'chat');
  if (slot.ok) await slot.value.release();
  else refused++;
}
const after = heapMiB();
const seconds = (performance.now() - started) / 1000;
console.log(
  `${accounts.toLocaleString('en')} accounts in ${seconds.toFixed(1)} s: heap ${before.toFixed(1)} MiB before, ` +
    `${after.toFixed(1)} MiB after (+${(after - before).toFixed(1)} MiB), refused ${refused}` +
    (gc ? '' : ' (run with --expose-gc for exact figures)'),
);
