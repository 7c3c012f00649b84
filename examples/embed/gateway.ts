/**
 * The gateway every example in this folder serves: one chat model on the in-process fake upstream
 * of @tollgate/testing (no provider key, no network), and a demo account with $5 of credit and a
 * key. Each runtime's file (node-hono.ts, node-http.ts, bun.ts, deno.ts) adds only its server.
 * docs/embedding.md shows these files; examples/embed/pack.test.ts runs them from the packed tarballs.
 */
import type { Store } from '@tollgate/billing';
import { createGateway, type Gateway } from '@tollgate/gateway';
import { memoryLimiter } from '@tollgate/limiter';
import { openaiCompatible } from '@tollgate/providers';
import { fakeOpenAI } from '@tollgate/testing';

/** A gateway and the key of its demo account. */
export interface DemoGateway {
  gateway: Gateway;
  /** The demo account: `store.getBalance(accountId)` shows what its requests cost. */
  accountId: string;
  /** `sk_svc_…`: shown once, only its SHA-256 is stored. */
  demoKey: string;
}

/**
 * Creates the demo account on `store` and a gateway serving model `fast` from it.
 *
 * @example
 * const { gateway, demoKey } = await demoGateway(sqliteStore('tollgate.db'));
 * Deno.serve(gateway.fetch);
 */
export async function demoGateway(store: Store, options: { basePath?: string } = {}): Promise<DemoGateway> {
  // A real provider: openaiCompatible({ baseURL: 'https://api.openai.com/v1', apiKey: process.env.OPENAI_API_KEY }).
  const upstream = fakeOpenAI({ reply: 'Hello from the fake upstream, served by Tollgate.' });
  const account = await store.createAccount({ plan: 'plus' });
  await store.addCredits(account.id, 5_000_000); // integer micro-dollars: $5
  const { key } = await store.createKey(account.id, 'demo');
  const gateway = createGateway({
    version: 'embed-example/1.0.0',
    store,
    limiter: memoryLimiter(),
    providers: { local: openaiCompatible({ baseURL: 'http://fake.invalid/v1', fetch: upstream.fetch }) },
    models: [
      {
        id: 'fast',
        type: 'chat',
        provider: 'local',
        upstream: 'gpt-4o-mini',
        input_modalities: ['text'],
        context_tokens: 128_000,
        max_output_tokens: 4_096,
        price: { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 100 },
      },
    ],
    ...options,
  });
  return { gateway, accountId: account.id, demoKey: key };
}
