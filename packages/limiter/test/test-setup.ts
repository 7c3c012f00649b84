/** Test helper (not exported): a limiter on a fresh memory store with a clock the test moves. */
import type { Plan } from '@tollgate/core';
import { createLimiter, type LimiterOptions } from '../src/create-limiter';
import { memoryLimiter } from '../src/memory-limiter';

/** The tests' start of time, unix milliseconds. */
export const T0 = 1_700_000_000_000;

/** A limiter over `memoryLimiter()`; `at(ms)` sets the clock to T0 + ms. */
export function setup(options: Partial<LimiterOptions> = {}) {
  let time = T0;
  const store = memoryLimiter();
  const limiter = createLimiter({ store, now: () => time, ...options });
  return { limiter, store, at: (ms: number) => (time = T0 + ms) };
}

/** An account on a plan. */
export const account = (plan: Plan, id = `acc_${plan}`) => ({ id, plan });
