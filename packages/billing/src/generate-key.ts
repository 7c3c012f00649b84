const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_LENGTH = 43;
const SERVICE_KEY = /^sk_svc_[A-Za-z0-9]{43}$/;

/**
 * A new API key: `sk_svc_` + 43 base62 characters (about 256 bits) from `crypto.getRandomValues`.
 * Bytes of 248 and above are dropped (rejection sampling) so every character is equally likely.
 *
 * @example
 * const key = generateKey(); // 'sk_svc_…'
 */
export function generateKey(): string {
  let secret = '';
  while (secret.length < SECRET_LENGTH) {
    // A fresh buffer per key: key material never sits in a pool shared with public ids.
    const bytes = crypto.getRandomValues(new Uint8Array(64));
    for (const byte of bytes) {
      if (secret.length >= SECRET_LENGTH) break;
      if (byte < 248) secret += ALPHABET[byte % 62];
    }
    bytes.fill(0);
  }
  return `sk_svc_${secret}`;
}

/** Whether a token is a whole service key: exactly `sk_svc_` + 43 base62 characters. */
export function isServiceKey(token: string): boolean {
  return SERVICE_KEY.test(token);
}
