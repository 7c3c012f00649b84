import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 8080, host: '127.0.0.1', adminPort: 9090, fetchMicrosPerCall: 0, onLimiterError: 'closed', shutdownGraceSeconds: 30 });
    expect(config.maxInFlight).toBeUndefined();
    expect(config.sharedSearchFetchPerMinute).toBeUndefined();
    expect(config.upstreamMaxSockets).toBe(256);
  });

  it('takes the upstream connection cap from TOLLGATE_UPSTREAM_MAX_SOCKETS, at least 1', () => {
    expect(loadConfig({ TOLLGATE_UPSTREAM_MAX_SOCKETS: '2048' }).upstreamMaxSockets).toBe(2_048);
    expect(() => loadConfig({ TOLLGATE_UPSTREAM_MAX_SOCKETS: '0' })).toThrow(/TOLLGATE_UPSTREAM_MAX_SOCKETS must be a whole number from 1 to 65535/);
  });

  it('takes the key cache from TOLLGATE_KEY_CACHE_MS, 0 to 60,000 ms, unset by default', () => {
    expect(loadConfig({}).keyCacheMs).toBeUndefined();
    expect(loadConfig({ TOLLGATE_KEY_CACHE_MS: '0' }).keyCacheMs).toBe(0);
    expect(loadConfig({ TOLLGATE_KEY_CACHE_MS: '5000' }).keyCacheMs).toBe(5_000);
    expect(() => loadConfig({ TOLLGATE_KEY_CACHE_MS: '60001' })).toThrow(/TOLLGATE_KEY_CACHE_MS must be a whole number from 0 to 60000/);
    expect(() => loadConfig({ TOLLGATE_KEY_CACHE_MS: '-1' })).toThrow(/TOLLGATE_KEY_CACHE_MS must be a whole number/);
  });

  it('gives memory back when idle unless told off', () => {
    expect(loadConfig({}).releaseMemory).toBe('idle');
    expect(loadConfig({ TOLLGATE_RELEASE_MEMORY: '' }).releaseMemory).toBe('idle');
    expect(loadConfig({ TOLLGATE_RELEASE_MEMORY: 'off' }).releaseMemory).toBe('off');
  });

  it('treats a variable set to the empty string as unset', () => {
    const config = loadConfig({ PORT: '', TOLLGATE_MAX_IN_FLIGHT: '', TOLLGATE_SEARCH_FETCH_PER_MINUTE: '', DATABASE_URL: '' });
    expect(config.port).toBe(8080);
    expect(config.maxInFlight).toBeUndefined();
    expect(config.sharedSearchFetchPerMinute).toBeUndefined();
    expect(config.databaseUrl).toBeUndefined();
  });

  it('refuses bad values with a message naming the setting', () => {
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(new ConfigError('PORT must be a whole number from 0 to 65535, not "eighty"'));
    expect(() => loadConfig({ TOLLGATE_MAX_IN_FLIGHT: '0' })).toThrow(/TOLLGATE_MAX_IN_FLIGHT must be a whole number from 1/);
    expect(() => loadConfig({ TOLLGATE_LIMITER_ON_ERROR: 'maybe' })).toThrow(/TOLLGATE_LIMITER_ON_ERROR must be "closed" or "open"/);
    expect(() => loadConfig({ TOLLGATE_RELEASE_MEMORY: 'sometimes' })).toThrow(
      new ConfigError('TOLLGATE_RELEASE_MEMORY must be "idle" or "off", not "sometimes"'),
    );
  });

  it('passes the gateway deadlines through, unset by default, at least 100 ms', () => {
    expect(loadConfig({}).upstreamHeadersTimeoutMs).toBeUndefined();
    const config = loadConfig({
      TOLLGATE_UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
      TOLLGATE_UPSTREAM_BODY_TIMEOUT_MS: '2500',
      TOLLGATE_STREAM_IDLE_TIMEOUT_MS: '100',
      TOLLGATE_CLIENT_STALL_TIMEOUT_MS: '3000',
    });
    expect(config).toMatchObject({ upstreamHeadersTimeoutMs: 1_500, upstreamBodyTimeoutMs: 2_500, streamIdleTimeoutMs: 100, clientStallTimeoutMs: 3_000 });
    expect(loadConfig({}).clientStallTimeoutMs).toBeUndefined();
    expect(() => loadConfig({ TOLLGATE_STREAM_IDLE_TIMEOUT_MS: '99' })).toThrow(
      new ConfigError('TOLLGATE_STREAM_IDLE_TIMEOUT_MS must be a whole number from 100 to 86400000, not "99"'),
    );
  });

  it('reads a config file, the environment winning, and refuses unknown keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'));
    try {
      const file = join(dir, 'tollgate.json');
      writeFileSync(file, JSON.stringify({ port: 9000, maxInFlight: 50 }));
      expect(loadConfig({ TOLLGATE_CONFIG: file })).toMatchObject({ port: 9000, maxInFlight: 50 });
      expect(loadConfig({ TOLLGATE_CONFIG: file, PORT: '9100' }).port).toBe(9100);
      // An empty string in the file is unset, as in the environment: never a 0 that skips the minimum.
      writeFileSync(file, JSON.stringify({ sharedSearchFetchPerMinute: '', maxInFlight: '', lowBalanceMicros: '', port: '' }));
      const blank = loadConfig({ TOLLGATE_CONFIG: file });
      expect([blank.sharedSearchFetchPerMinute, blank.maxInFlight, blank.lowBalanceMicros, blank.port]).toEqual([undefined, undefined, undefined, 8080]);
      writeFileSync(file, JSON.stringify({ prot: 9000 }));
      expect(() => loadConfig({ TOLLGATE_CONFIG: file })).toThrow('TOLLGATE_CONFIG: unknown setting "prot"');
      writeFileSync(file, '{ nope');
      expect(() => loadConfig({ TOLLGATE_CONFIG: file })).toThrow(/is not valid JSON/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
