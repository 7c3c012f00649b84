import type { AcquireResult, LimiterStore, RateLimit, RateResult, Semaphore } from '@tollgate/limiter';
import { groupByHashTag } from './group-by-hash-tag';
import type { RedisLike } from './redis-like';
import { scriptRunner } from './script-runner';

/** Options of {@link redisLimiter}. */
export interface RedisLimiterOptions {
  /** Prefix of every key (default `tollgate:`); it must not contain `{` or `}`. */
  prefix?: string;
  /** Extra life of keys past the moment their state lapses, against clock skew (default 5,000 ms). */
  expirySlackMs?: number;
}

/**
 * A `LimiterStore` on Redis, shared by every gateway instance: GCRA and leases as Lua scripts.
 *
 * Keys are `<prefix><limiter key>`, e.g. `tollgate:{acc_1}:rate:plan`: an account's keys share
 * a hash tag, so one script updates them atomically, on Redis Cluster too. A call whose keys span
 * several tags (an account and the service-wide `{$service}` keys) runs one script per tag in
 * order; when a later tag refuses, the earlier ones are taken back (refund / release), so a
 * refused request consumes nothing.
 *
 * @example
 * import Redis from 'ioredis';
 * const limiter = createLimiter({ store: redisLimiter(new Redis(process.env.REDIS_URL!)) });
 */
export function redisLimiter(redis: RedisLike, options: RedisLimiterOptions = {}): LimiterStore {
  const prefix = options.prefix ?? 'tollgate:';
  if (/[{}]/.test(prefix)) throw new TypeError('redisLimiter: the key prefix must not contain { or }');
  const slack = options.expirySlackMs ?? 5_000;
  const run = scriptRunner(redis);
  const full = (key: string) => prefix + key;
  const release = (keys: string[], leaseId: string) => Promise.all(groupByHashTag(keys).map((group) => run('release', pick(keys, group).map(full), [leaseId])));
  /** Takes one request back from each of `limits`, one script per hash tag. */
  const refund = (limits: RateLimit[], now: number) =>
    Promise.all(
      groupByHashTag(limits.map((limit) => limit.key)).map((group) => {
        const grouped = pick(limits, group);
        return run(
          'refund',
          grouped.map((limit) => full(limit.key)),
          [String(now), slack, ...grouped.map((limit) => String(limit.intervalMs))],
        );
      }),
    );

  return {
    async rate(limits: RateLimit[], now: number): Promise<RateResult> {
      const admitted: number[][] = [];
      for (const group of groupByHashTag(limits.map((limit) => limit.key))) {
        const grouped = pick(limits, group);
        const args: (string | number)[] = [String(now), slack];
        for (const limit of grouped) args.push(String(limit.intervalMs), limit.burst);
        // The script answers [refused (0, or the 1-based position in the group), wait ms].
        const reply = await run(
          'rate',
          grouped.map((limit) => full(limit.key)),
          args,
        );
        const [refused, wait] = Array.isArray(reply) ? reply.map(Number) : [Number.NaN];
        if (refused === 0) {
          admitted.push(group);
          continue;
        }
        // Compensation: the earlier groups were consumed by a request that is now refused.
        await refund(
          admitted.flatMap((done) => pick(limits, done)),
          now,
        ).catch(() => {});
        return { ok: false, error: { index: refusedIndex(group, refused), retryAfterMs: Number(wait) } };
      }
      return { ok: true, value: undefined };
    },

    async refund(limits: RateLimit[], now: number): Promise<void> {
      await refund(limits, now);
    },

    async acquire(semaphores: Semaphore[], leaseId: string, ttlMs: number, now: number): Promise<AcquireResult> {
      const held: string[] = [];
      for (const group of groupByHashTag(semaphores.map((semaphore) => semaphore.key))) {
        const grouped = pick(semaphores, group);
        const keys = grouped.map((semaphore) => semaphore.key);
        const args = [leaseId, String(now), ttlMs, slack, ...grouped.map((semaphore) => semaphore.max)];
        const refused = Number(await run('acquire', keys.map(full), args));
        if (refused === 0) {
          held.push(...keys);
          continue;
        }
        if (held.length > 0) await release(held, leaseId).catch(() => {});
        return { ok: false, error: { index: refusedIndex(group, refused) } };
      }
      return { ok: true, value: undefined };
    },

    async extend(keys: string[], leaseId: string, ttlMs: number, now: number): Promise<void> {
      await Promise.all(groupByHashTag(keys).map((group) => run('extend', pick(keys, group).map(full), [leaseId, String(now), ttlMs, slack])));
    },

    async release(keys: string[], leaseId: string): Promise<void> {
      await release(keys, leaseId);
    },

    async inFlight(key: string, now: number): Promise<number> {
      return Number(await run('inFlight', [full(key)], [String(now)]));
    },
  };
}

/** The items at a group's indexes (every index is one of `items`, so none is left out). */
function pick<T>(items: readonly T[], group: readonly number[]): T[] {
  return group.flatMap((index) => {
    const item = items[index];
    return item === undefined ? [] : [item];
  });
}

/**
 * The caller's index of the item a script refused, from its 1-based position in the group. A
 * position the group does not have is a broken script: a store failure, which refuses the request.
 */
function refusedIndex(group: readonly number[], position: number | undefined): number {
  const index = position === undefined ? undefined : group[position - 1];
  if (index === undefined) throw new Error(`redis limiter: the script refused position ${String(position)}, which its group does not have`);
  return index;
}
