/**
 * The few Redis commands the limiter uses, typed structurally so ioredis (`Redis` and `Cluster`)
 * and other clients with the same promise-returning `eval`/`evalsha` fit without an adapter.
 */
export interface RedisLike {
  /** EVALSHA sha numkeys key… arg…; rejects with a `NOSCRIPT` error when the script is not cached. */
  evalsha(sha1: string, numkeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
  /** EVAL script numkeys key… arg…; also caches the script for later EVALSHA. */
  eval(script: string, numkeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown>;
}
