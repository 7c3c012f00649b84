import { LUA, type ScriptName } from './lua-scripts';
import type { RedisLike } from './redis-like';

/** Runs a named script with its keys and arguments. */
export type RunScript = (name: ScriptName, keys: string[], args: (string | number)[]) => Promise<unknown>;

const shas = new Map<ScriptName, Promise<string>>();

/** The SHA-1 of a script, computed once per process with Web Crypto. */
function sha1(name: ScriptName): Promise<string> {
  let sha = shas.get(name);
  if (sha === undefined) {
    sha = crypto.subtle
      .digest('SHA-1', new TextEncoder().encode(LUA[name]))
      .then((digest) => [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join(''));
    shas.set(name, sha);
  }
  return sha;
}

/**
 * Runs scripts by EVALSHA and falls back to EVAL on `NOSCRIPT` (a restarted server, a failover,
 * a Cluster node that has not seen the script yet); EVAL caches it, so the next call is EVALSHA.
 */
export function scriptRunner(redis: RedisLike): RunScript {
  return async (name, keys, args) => {
    const sha = await sha1(name);
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      return redis.eval(LUA[name], keys.length, ...keys, ...args);
    }
  };
}
