import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes the benches' catalogue into `dir` and returns its path: one chat model, `bench`, on the
 * fake OpenAI upstream at `upstreamUrl`, whose key the server reads from `BENCH_UPSTREAM_KEY`.
 */
export function writeBenchCatalogue(dir: string, upstreamUrl: string): string {
  const catalogue = join(dir, 'catalogue.json');
  writeFileSync(
    catalogue,
    JSON.stringify({
      providers: { upstream: { kind: 'openai-compatible', baseURL: `${upstreamUrl}/v1`, apiKeyEnv: 'BENCH_UPSTREAM_KEY' } },
      models: [
        {
          id: 'bench',
          type: 'chat',
          provider: 'upstream',
          upstream: 'gpt-4o-mini',
          max_output_tokens: 256,
          price: { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 10 },
        },
      ],
    }),
  );
  return catalogue;
}
