import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '@tollgate/billing';
import { memoryLimiter, type LimiterStore } from '@tollgate/limiter';
import { sqliteStore } from '@tollgate/store-sqlite';
import { postgresStore } from '@tollgate/store-postgres';
import { redisLimiter } from '@tollgate/store-redis';
import { Redis } from 'ioredis';
import type { ServerConfig } from './config';

/** The store the configuration names: PostgreSQL with DATABASE_URL, else SQLite under the data dir. */
export function openStore(config: ServerConfig): Store & { close(): Promise<void> } {
  if (config.databaseUrl) return postgresStore(config.databaseUrl);
  mkdirSync(config.dataDir, { recursive: true });
  return sqliteStore(join(config.dataDir, 'tollgate.db'));
}

/** The limiter store: Redis with REDIS_URL (shared by instances), else in memory. */
export function openLimiter(config: ServerConfig): LimiterStore & { close?(): Promise<void> } {
  if (!config.redisUrl) return memoryLimiter();
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  redis.on('error', () => {
    // Failures surface per request as 503 service_unavailable (fail closed); no crash, no log flood.
  });
  const store = redisLimiter(redis);
  return {
    ...store,
    rate: store.rate.bind(store),
    acquire: store.acquire.bind(store),
    extend: store.extend.bind(store),
    release: store.release.bind(store),
    inFlight: store.inFlight.bind(store),
    close: async () => {
      redis.disconnect();
    },
  };
}
