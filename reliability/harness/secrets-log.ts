/**
 * Everything the suite saw come out of a server: log lines, reply bodies and headers, /metrics.
 * The secrets scenario scans it for the keys, key hashes and upstream credential the suite made.
 */

const seen: string[] = [];
const secrets = new Set<string>();

/** Records text a server produced (a reply, a log, /metrics). Bounded: the scan needs the text, not every copy. */
export function recordOutput(text: string): void {
  if (seen.length < 200_000) seen.push(text);
}

/** Registers a secret that must never appear in any recorded output. */
export function recordSecret(secret: string): void {
  if (secret.length >= 8) secrets.add(secret);
}

/** The outputs recorded so far and the secrets to look for. */
export function recorded(): { outputs: readonly string[]; secrets: ReadonlySet<string> } {
  return { outputs: seen, secrets };
}
