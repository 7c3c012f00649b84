import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeOpenAI } from '@tollgate/testing';
import { listen } from '@tollgate/testing/server';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { startServer } from './start-server';

// TOLLGATE_UPSTREAM_MAX_SOCKETS caps the connections to one upstream origin: a stream beyond the
// cap waits for a connection to come free. An upstream whose streams take about a second shows it:
// with a cap of 1 the second of two concurrent streams starts only once the first has ended; with
// a cap of 2 both start at once.
const DRIP_MS = 100; // 10 words: some 13 events, about 1.3 s a stream

describe('the upstream connection cap (TOLLGATE_UPSTREAM_MAX_SOCKETS)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function firstBytesAfter(maxSockets: number): Promise<number[]> {
    const fake = fakeOpenAI({ reply: 'one two three four five six seven eight nine ten', faults: () => ({ kind: 'drip', delayMs: DRIP_MS }) });
    const upstream = await listen(fake.handle);
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-pool-'));
    dirs.push(dir);
    const catalogue = join(dir, 'catalogue.json');
    writeFileSync(
      catalogue,
      JSON.stringify({
        providers: { up: { kind: 'openai-compatible', baseURL: `${upstream.url}/v1`, apiKeyEnv: 'TOLLGATE_TEST_POOL_KEY' } },
        models: [
          {
            id: 'slow',
            type: 'chat',
            provider: 'up',
            max_output_tokens: 100,
            price: { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 1_000_000, min_hold_micros: 10 },
          },
        ],
      }),
    );
    process.env.TOLLGATE_TEST_POOL_KEY = 'sk-test';
    const config = loadConfig({
      PORT: '0',
      ADMIN_PORT: '0',
      TOLLGATE_DATA_DIR: dir,
      TOLLGATE_CATALOGUE: catalogue,
      TOLLGATE_UPSTREAM_MAX_SOCKETS: String(maxSockets),
    });
    const server = await startServer(config, { log: () => {} });
    try {
      const key = server.demoKey!;
      const started = performance.now();
      const stream = async () => {
        const reply = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'slow', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        });
        const reader = reply.body!.getReader();
        await reader.read();
        const first = performance.now() - started;
        while (!(await reader.read()).done) {}
        return first;
      };
      return (await Promise.all([stream(), stream()])).sort((a, b) => a - b);
    } finally {
      await server.close();
      await upstream.close();
    }
  }

  it('with a cap of 1, the second stream waits for the first; with 2, both start at once', async () => {
    const [, secondCapped] = await firstBytesAfter(1);
    expect(secondCapped).toBeGreaterThan(900);
    const [, secondFree] = await firstBytesAfter(2);
    expect(secondFree).toBeLessThan(600);
  }, 20_000);
});
