import { createHash } from 'node:crypto';

/**
 * The SHA-256 hex digest of a whole key, synchronously (node:crypto): the same digest as
 * `hashKey` of `@tollgate/billing`, without Web Crypto's thread-pool round trip on every request.
 * node:crypto is also there on Bun and Deno.
 *
 * @example
 * createGateway({ ...options, hashKey: nodeHashKey });
 */
export function nodeHashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
