import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '@tollgate/billing';
import { memoryLimiter, type LimiterStore } from '@tollgate/limiter';
import { sqliteStore } from '@tollgate/store-sqlite';
import type { Redis, RedisOptions } from 'ioredis';
import type { ServerConfig } from './config';

// PostgreSQL's and Redis's clients load only when configured: ioredis alone is some 25 MB of RSS
// at load, which a server on its embedded defaults (SQLite, memory limiter) never uses.

/**
 * The store the configuration names: PostgreSQL with DATABASE_URL, else SQLite under the data dir.
 * `serving` (the server, not a CLI command): SQLite's WAL is checkpointed every second on a thread
 * of its own, not inside a request's commit (docs/operations.md).
 */
export async function openStore(config: ServerConfig, options: { serving?: boolean } = {}): Promise<Store & { close(): Promise<void> }> {
  if (config.databaseUrl) {
    const { postgresStore } = await import('@tollgate/store-postgres');
    return postgresStore(config.databaseUrl);
  }
  mkdirSync(config.dataDir, { recursive: true });
  return sqliteStore(join(config.dataDir, 'tollgate.db'), options.serving ? { checkpointEveryMs: 1_000 } : {});
}

/**
 * Redis client settings for the limiter: a request never waits for Redis. While the connection is
 * down a command fails at once (no offline queue), a hung connection fails after `commandTimeout`,
 * and the gateway turns either into 503 service_unavailable (or admits, with
 * TOLLGATE_LIMITER_ON_ERROR=open). The client keeps reconnecting in the background.
 */
const REDIS_OPTIONS: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000 };

/** The limiter store: Redis with REDIS_URL (shared by instances), else in memory. */
export async function openLimiter(config: ServerConfig): Promise<LimiterStore> {
  if (!config.redisUrl) return memoryLimiter();
  const [{ Redis }, { redisLimiter }] = await Promise.all([import('ioredis'), import('@tollgate/store-redis')]);
  const redis = new Redis(config.redisUrl, REDIS_OPTIONS);
  // Failures surface per request as 503 service_unavailable; no crash, no log flood.
  redis.on('error', () => {});
  // redisLimiter returns a plain object of closures: adding `close` is all it needs.
  return { ...redisLimiter(redis), close: () => closeRedis(redis) };
}

/** QUIT lets replies in flight arrive; when Redis is unreachable it cannot be sent, so drop the socket. */
async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
