import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The reference server's settings: environment first, then an optional JSON config file. */
export interface ServerConfig {
  /** Port of the API (default 8080). */
  port: number;
  /** Interface to bind (default 127.0.0.1). */
  host: string;
  /** Port of /metrics and /health; 0 turns it off (default 9090). */
  adminPort: number;
  /** Where the SQLite file lives (default ./data). */
  dataDir: string;
  /** PostgreSQL instead of SQLite. */
  databaseUrl?: string;
  /** Redis for limits shared by several instances. */
  redisUrl?: string;
  /** A model catalogue file (see docs/configuration.md). */
  cataloguePath?: string;
  /** `X-Service-Version`. */
  version: string;
  /** Service-wide search + fetch requests a minute. */
  sharedSearchFetchPerMinute?: number;
  /** Service-wide requests in flight. */
  maxInFlight?: number;
  /** Micro-dollars per page fetch. */
  fetchMicrosPerCall: number;
  /** Connections per upstream origin, in use and idle (default 256); a call beyond it waits for one. */
  upstreamMaxSockets: number;
  /** Limits when Redis is down: refuse (`closed`, default) or admit (`open`). */
  onLimiterError: 'closed' | 'open';
  /** Give a burst's memory back once the server goes quiet (`idle`, default; releaseMemoryWhenIdle of @tollgate/node) or not (`off`). */
  releaseMemory: 'idle' | 'off';
  /** Seconds to let in-flight requests finish on SIGTERM (default 30). */
  shutdownGraceSeconds: number;
  /** How long a hold and an in-flight slot outlive a crashed instance (gateway default 15 minutes). */
  holdTtlMs?: number;
  /** How long a verified key is trusted without asking the store (gateway default 1 s; 0: no cache). */
  keyCacheMs?: number;
  /** How long an upstream may take to answer (gateway default 5 minutes). */
  upstreamHeadersTimeoutMs?: number;
  /** How long a whole reply's body may take after its headers (gateway default 5 minutes). */
  upstreamBodyTimeoutMs?: number;
  /** Silence that ends an open stream, the upstream's or a client that reads nothing (gateway default 5 minutes). */
  streamIdleTimeoutMs?: number;
  /** How long a stream's client may take no bytes before it is cut (gateway default: the stream idle limit). */
  clientStallTimeoutMs?: number;
  /** The admin API's bearer token (at least 16 characters); unset, the admin port serves no admin routes. */
  adminToken?: string;
  /** Signed webhooks of the gateway's events (docs/events.md): on when both are set, from the environment only. */
  webhook?: { url: string; secret: string };
  /** The `balance.low` threshold, micro-dollars (`TOLLGATE_LOW_BALANCE_MICROS`); unset, no `balance.low`. */
  lowBalanceMicros?: number;
}

/** A configuration error: the message says which setting and why. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The gateway's deadlines the server passes through: file key -> environment variable. */
const DEADLINES = {
  upstreamHeadersTimeoutMs: 'TOLLGATE_UPSTREAM_HEADERS_TIMEOUT_MS',
  upstreamBodyTimeoutMs: 'TOLLGATE_UPSTREAM_BODY_TIMEOUT_MS',
  streamIdleTimeoutMs: 'TOLLGATE_STREAM_IDLE_TIMEOUT_MS',
  clientStallTimeoutMs: 'TOLLGATE_CLIENT_STALL_TIMEOUT_MS',
} as const;

const FILE_KEYS = new Set([
  'port',
  'host',
  'adminPort',
  'dataDir',
  'databaseUrl',
  'redisUrl',
  'cataloguePath',
  'sharedSearchFetchPerMinute',
  'maxInFlight',
  'fetchMicrosPerCall',
  'upstreamMaxSockets',
  'onLimiterError',
  'releaseMemory',
  'shutdownGraceSeconds',
  'holdTtlMs',
  'keyCacheMs',
  'lowBalanceMicros',
  ...Object.keys(DEADLINES),
]);

/**
 * Reads the configuration from the environment (`PORT`, `HOST`, `ADMIN_PORT`, `TOLLGATE_DATA_DIR`,
 * `DATABASE_URL`, `REDIS_URL`, `TOLLGATE_CATALOGUE`, `TOLLGATE_CONFIG`, ...) with clear errors.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): ServerConfig {
  let file: Record<string, unknown> = {};
  if (env.TOLLGATE_CONFIG) {
    let text: string;
    try {
      text = readFileSync(env.TOLLGATE_CONFIG, 'utf8');
    } catch {
      throw new ConfigError(`TOLLGATE_CONFIG: cannot read ${env.TOLLGATE_CONFIG}`);
    }
    try {
      file = JSON.parse(text) as Record<string, unknown>;
    } catch (error) {
      throw new ConfigError(`TOLLGATE_CONFIG: ${env.TOLLGATE_CONFIG} is not valid JSON (${(error as Error).message})`);
    }
    if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new ConfigError('TOLLGATE_CONFIG: the file must hold a JSON object');
    for (const key of Object.keys(file)) if (!FILE_KEYS.has(key)) throw new ConfigError(`TOLLGATE_CONFIG: unknown setting "${key}"`);
  }
  // A variable or a file value set to the empty string counts as unset, so `FOO=` or `"foo": ""` never means 0.
  const pick = (envName: string, key: string): unknown => (env[envName] === '' ? undefined : env[envName]) ?? (file[key] === '' ? undefined : file[key]);
  const config: ServerConfig = {
    port: integer(pick('PORT', 'port'), 'PORT', 8080, 0, 65535),
    host: string(pick('HOST', 'host'), 'HOST') ?? '127.0.0.1',
    adminPort: integer(pick('ADMIN_PORT', 'adminPort'), 'ADMIN_PORT', 9090, 0, 65535),
    dataDir: resolve(string(pick('TOLLGATE_DATA_DIR', 'dataDir'), 'TOLLGATE_DATA_DIR') ?? 'data'),
    version: `tollgate/${VERSION}`,
    fetchMicrosPerCall: integer(pick('TOLLGATE_FETCH_MICROS', 'fetchMicrosPerCall'), 'TOLLGATE_FETCH_MICROS', 0, 0, Number.MAX_SAFE_INTEGER),
    upstreamMaxSockets: integer(pick('TOLLGATE_UPSTREAM_MAX_SOCKETS', 'upstreamMaxSockets'), 'TOLLGATE_UPSTREAM_MAX_SOCKETS', 256, 1, 65_535),
    onLimiterError: limiterMode(pick('TOLLGATE_LIMITER_ON_ERROR', 'onLimiterError')),
    releaseMemory: releaseMode(pick('TOLLGATE_RELEASE_MEMORY', 'releaseMemory')),
    shutdownGraceSeconds: integer(pick('TOLLGATE_SHUTDOWN_GRACE', 'shutdownGraceSeconds'), 'TOLLGATE_SHUTDOWN_GRACE', 30, 0, 3600),
  };
  const databaseUrl = string(pick('DATABASE_URL', 'databaseUrl'), 'DATABASE_URL');
  if (databaseUrl) config.databaseUrl = databaseUrl;
  const redisUrl = string(pick('REDIS_URL', 'redisUrl'), 'REDIS_URL');
  if (redisUrl) config.redisUrl = redisUrl;
  const cataloguePath = string(pick('TOLLGATE_CATALOGUE', 'cataloguePath'), 'TOLLGATE_CATALOGUE');
  if (cataloguePath) config.cataloguePath = resolve(cataloguePath);
  const shared = pick('TOLLGATE_SEARCH_FETCH_PER_MINUTE', 'sharedSearchFetchPerMinute');
  if (shared !== undefined) config.sharedSearchFetchPerMinute = integer(shared, 'TOLLGATE_SEARCH_FETCH_PER_MINUTE', 0, 1, 1_000_000);
  const maxInFlight = pick('TOLLGATE_MAX_IN_FLIGHT', 'maxInFlight');
  if (maxInFlight !== undefined) config.maxInFlight = integer(maxInFlight, 'TOLLGATE_MAX_IN_FLIGHT', 0, 1, 1_000_000);
  // At least a second: the gateway renews live holds' slots every third of it.
  const holdTtl = pick('TOLLGATE_HOLD_TTL_MS', 'holdTtlMs');
  if (holdTtl !== undefined && holdTtl !== '') config.holdTtlMs = integer(holdTtl, 'TOLLGATE_HOLD_TTL_MS', 0, 1_000, 86_400_000);
  const keyCache = pick('TOLLGATE_KEY_CACHE_MS', 'keyCacheMs');
  if (keyCache !== undefined && keyCache !== '') config.keyCacheMs = integer(keyCache, 'TOLLGATE_KEY_CACHE_MS', 0, 0, 60_000);
  // Unset: the gateway's defaults. Short values serve tests and the reliability suite (reliability/).
  const deadline = (key: keyof typeof DEADLINES) => {
    const value = pick(DEADLINES[key], key);
    if (value !== undefined && value !== '') config[key] = integer(value, DEADLINES[key], 0, 100, 86_400_000);
  };
  deadline('upstreamHeadersTimeoutMs');
  deadline('upstreamBodyTimeoutMs');
  deadline('streamIdleTimeoutMs');
  deadline('clientStallTimeoutMs');
  // A secret: from the environment only (never the config file, as provider keys), never echoed.
  const adminToken = string(env.TOLLGATE_ADMIN_TOKEN, 'TOLLGATE_ADMIN_TOKEN');
  if (adminToken !== undefined) {
    if (adminToken.length < 16 || /\s/.test(adminToken)) throw new ConfigError('TOLLGATE_ADMIN_TOKEN must be at least 16 characters without spaces');
    config.adminToken = adminToken;
  }
  const webhook = webhookConfig(env);
  if (webhook) config.webhook = webhook;
  const lowBalance = pick('TOLLGATE_LOW_BALANCE_MICROS', 'lowBalanceMicros');
  if (lowBalance !== undefined) config.lowBalanceMicros = integer(lowBalance, 'TOLLGATE_LOW_BALANCE_MICROS', 0, 1, Number.MAX_SAFE_INTEGER);
  return config;
}

/**
 * `TOLLGATE_WEBHOOK_URL` and `TOLLGATE_WEBHOOK_SECRET`, both or neither, from the environment only
 * (the secret signs, and the URL may carry a token): an http(s) URL, and a secret of at least 16
 * characters without spaces. Neither is ever echoed in an error.
 */
function webhookConfig(env: NodeJS.ProcessEnv): { url: string; secret: string } | undefined {
  const url = string(env.TOLLGATE_WEBHOOK_URL, 'TOLLGATE_WEBHOOK_URL');
  const secret = string(env.TOLLGATE_WEBHOOK_SECRET, 'TOLLGATE_WEBHOOK_SECRET');
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined) throw new ConfigError('TOLLGATE_WEBHOOK_SECRET is set without TOLLGATE_WEBHOOK_URL: set both, or neither');
  if (secret === undefined) throw new ConfigError('TOLLGATE_WEBHOOK_URL is set without TOLLGATE_WEBHOOK_SECRET: set both, or neither');
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:') throw new ConfigError('TOLLGATE_WEBHOOK_URL must be an http:// or https:// URL');
  // fetch refuses a URL with credentials, quoting it whole in its error: a token goes in the path or query.
  if (parsed.username !== '' || parsed.password !== '')
    throw new ConfigError('TOLLGATE_WEBHOOK_URL must not carry a user or password: put a token in its path or query, and sign with TOLLGATE_WEBHOOK_SECRET');
  if (secret.length < 16 || /\s/.test(secret)) throw new ConfigError('TOLLGATE_WEBHOOK_SECRET must be at least 16 characters without spaces');
  return { url, secret };
}

/** The server's build version. */
export const VERSION = '0.1.0';

function integer(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const number = typeof value === 'number' ? value : /^-?\d+$/.test(String(value)) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${String(value)}"`);
  return number;
}

function string(value: unknown, name: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new ConfigError(`${name} must be a string`);
  return value;
}

function limiterMode(value: unknown): 'closed' | 'open' {
  if (value === undefined || value === '' || value === 'closed') return 'closed';
  if (value === 'open') return 'open';
  throw new ConfigError(`TOLLGATE_LIMITER_ON_ERROR must be "closed" or "open", not "${String(value)}"`);
}

function releaseMode(value: unknown): 'idle' | 'off' {
  if (value === undefined || value === '' || value === 'idle') return 'idle';
  if (value === 'off') return 'off';
  throw new ConfigError(`TOLLGATE_RELEASE_MEMORY must be "idle" or "off", not "${String(value)}"`);
}
