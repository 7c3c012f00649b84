export { redisLimiter } from './redis-limiter';
export type { RedisLimiterOptions } from './redis-limiter';
export type { RedisLike } from './redis-like';
