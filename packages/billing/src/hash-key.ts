const encoder = new TextEncoder();

/**
 * The SHA-256 hex digest of a whole key, the only form in which stores keep keys.
 *
 * @example
 * const record = await store.findKey(await hashKey(token));
 */
export async function hashKey(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(key)));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
