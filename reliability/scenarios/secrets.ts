/**
 * Secrets: every log line, reply body and /metrics output the suite saw is scanned for the API
 * keys it made, their SHA-256 hashes, the upstream credential, any whole `sk_svc_` key and any
 * Authorization header or Bearer credential. Run it after the other scenarios.
 */
import { check, type ScenarioResult } from '../harness/result';
import { recorded } from '../harness/secrets-log';

/** Patterns no output may hold, whatever the secret: a whole key, an Authorization header, a Bearer credential. */
const PATTERNS: [string, RegExp][] = [
  ['a whole sk_svc_ key', /sk_svc_[A-Za-z0-9]{43}/],
  ['an Authorization header', /authorization["']?\s*[:=]/i],
  ['a Bearer credential', /Bearer\s+[A-Za-z0-9_-]{8,}/],
];

export function secretsScenario(): ScenarioResult {
  const { outputs, secrets } = recorded();
  const found = new Map<string, number>();
  const where: string[] = [];
  const note = (what: string, output: string, at: number) => {
    found.set(what, (found.get(what) ?? 0) + 1);
    // Where it was, with the secret itself cut out: enough to find the line, never the secret.
    if (where.length < 5) where.push(`${what} in "${output.slice(Math.max(0, at - 60), at).replace(/\s+/g, ' ')}…"`);
  };
  let bytes = 0;
  for (const output of outputs) {
    bytes += output.length;
    for (const secret of secrets) if (output.includes(secret)) note('a secret the suite made', output, output.indexOf(secret));
    for (const [name, pattern] of PATTERNS) {
      const match = pattern.exec(output);
      if (match) note(name, output, match.index);
    }
  }
  const metrics = outputs.filter((output) => output.includes('tollgate_requests_total')).length;
  return {
    scenario: 'secrets scan',
    figures: {
      'outputs scanned': outputs.length,
      'MB scanned': Number((bytes / 2 ** 20).toFixed(1)),
      'secrets looked for': secrets.size,
      '/metrics scrapes': metrics,
      findings: found.size,
    },
    checks: [
      check(
        'logs, replies and /metrics hold no key, key hash, upstream credential or Authorization header',
        found.size === 0,
        found.size === 0 ? `${outputs.length} outputs clean` : `${[...found].map(([what, count]) => `${count}× ${what}`).join(', ')}: ${where.join(' | ')}`,
      ),
      check(
        'the scan saw logs, replies and /metrics',
        outputs.length > 100 && secrets.size > 2 && metrics > 0,
        `${outputs.length} outputs, ${metrics} /metrics scrapes`,
      ),
    ],
  };
}
