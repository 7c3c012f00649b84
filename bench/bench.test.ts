/**
 * Smoke test of `npm run bench`: a one-second run of every chat load and a tiny parser run, so CI
 * proves the bench still starts, measures, and that the gateway answered every request with 2xx.
 */
import { describe, expect, it } from 'vitest';
import { runChatBench } from './chat-bench';
import { runParserBench } from './parser-bench';

describe('bench', () => {
  it('runs the gateway and the bare proxy, streamed and not, with only 2xx replies', async () => {
    const result = await runChatBench({ seconds: 1, connections: 4, ttfbSamples: 5, accounts: 100 });
    expect(result.rows.map((row) => row.name)).toEqual(['bare proxy, non-streamed', 'gateway, non-streamed', 'bare proxy, streamed', 'gateway, streamed']);
    for (const row of result.rows) {
      expect({ name: row.name, errors: row.errors, timeouts: row.timeouts, non2xx: row.non2xx }).toEqual({ name: row.name, errors: 0, timeouts: 0, non2xx: 0 });
      expect(row.requests).toBeGreaterThan(0);
      expect(row.requestsPerSecond).toBeGreaterThan(0);
      expect(row.p99).toBeGreaterThanOrEqual(row.p50);
    }
    for (const ttfb of [result.ttfb.bare, result.ttfb.gateway]) {
      expect(ttfb.p50).toBeGreaterThan(0);
      expect(ttfb.p99).toBeGreaterThanOrEqual(ttfb.p50);
    }
    expect(result.admittedPerSecond).toBe(1000);
  }, 30_000);

  it('compares the strict parser with JSON.parse on small bodies', async () => {
    const rows = await runParserBench({ budgetMs: 5, sizes: [16 * 1024, 64 * 1024] });
    expect(rows.map((row) => row.body)).toEqual(['16 KiB', '64 KiB']);
    for (const row of rows) {
      expect(row.bytes).toBe(row.body === '16 KiB' ? 16 * 1024 : 64 * 1024);
      expect(row.strictMBps).toBeGreaterThan(0);
      expect(row.ratio).toBeCloseTo(row.strictMBps / row.jsonParseMBps, 10);
    }
  });
});
