/**
 * Test set-up for gateway tests (not exported): a gateway over the memory store and limiter, an
 * OpenAI-compatible fake upstream, a manual clock, and a funded account with a key. Time helpers
 * are in test-timers.ts, leak and ledger checks in test-leaks.ts, a step-by-step SSE reader in test-sse.ts.
 */
import type { ModelConfig, Plan } from '@tollgate/core';
import { memoryStore, type Store } from '@tollgate/billing';
import { memoryLimiter, type LimiterStore } from '@tollgate/limiter';
import { limiterKeys } from '@tollgate/limiter/store-kit';
import { openaiCompatible, type Provider } from '@tollgate/providers';
import { fakeOpenAI } from '@tollgate/testing';
import { createGateway, type Gateway } from '../src/create-gateway';
import type { GatewayOptions, RequestLog } from '../src/gateway-options';
import { manualClock, type ManualClock } from './test-timers';

/** The upstream credential the tests give the provider; it must never reach a client. */
export const UPSTREAM_KEY = 'sk-upstream-SECRET-credential-0000';

/** A chat price with round numbers: 1 micro-dollar per prompt token, 2 per completion token, at least 50 held. */
export const CHAT_PRICE = { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 2_000_000, min_hold_micros: 50 };

/** The default test models: a free chat model, a plus-only one, and an image model. */
export function testModels(): ModelConfig[] {
  return [
    {
      id: 'fast',
      type: 'chat',
      provider: 'local',
      upstream: 'gpt-4o-mini',
      label: 'Fast',
      owned_by: 'test',
      input_modalities: ['text', 'image'],
      context_tokens: 100_000,
      max_output_tokens: 1_000,
      default_output_tokens: 500,
      price: CHAT_PRICE,
    },
    { id: 'smart', type: 'chat', provider: 'local', upstream: 'gpt-4o', plan: 'plus', max_output_tokens: 1_000, price: CHAT_PRICE },
    {
      id: 'painter',
      type: 'image',
      provider: 'local',
      upstream: 'gpt-image-1',
      price: { micros_per_image: 40_000, micros_per_reference: 5_000 },
      max_reference_images: 2,
      resolutions: ['1k', '2k'],
      qualities: ['low', 'high'],
    },
  ];
}

/** Options of {@link setup}. */
export interface SetupOptions extends Partial<GatewayOptions> {
  plan?: Plan;
  credits?: number;
  /** The clock of the gateway and store (and of manual timers built on it); `now` alone gives a clock that cannot advance. */
  clock?: ManualClock;
  fakeOptions?: Parameters<typeof fakeOpenAI>[0];
}

/** What a test gets. */
export interface TestGateway {
  gateway: Gateway;
  store: Store;
  fake: ReturnType<typeof fakeOpenAI>;
  provider: Provider;
  limiter: LimiterStore;
  clock: ManualClock;
  accountId: string;
  key: string;
  keyId: string;
  logs: RequestLog[];
  /** POST JSON (or a raw string body) with the account's key unless headers say otherwise. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** GET with the account's key. */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /** Requests in flight for an account (the test account by default), as the limiter counts them now. */
  inFlight(accountId?: string): Promise<number>;
  /** The account's balance. */
  balance(): Promise<{ balance: number; held: number; available: number }>;
}

/** Builds a gateway for a test. */
export async function setup(options: SetupOptions = {}): Promise<TestGateway> {
  const clock = options.clock ?? (options.now ? { now: options.now, advance: () => {} } : manualClock());
  const store = options.store ?? memoryStore({ now: clock.now });
  const fake = fakeOpenAI(options.fakeOptions);
  const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: fake.fetch });
  const limiter = options.limiter ?? memoryLimiter();
  const logs: RequestLog[] = [];
  const gateway = createGateway({
    version: 'tollgate/test',
    store,
    limiter,
    providers: { local: provider },
    models: testModels(),
    log: (record) => logs.push(record),
    ...options,
    now: clock.now,
  });
  const account = await store.createAccount({ plan: options.plan ?? 'free' });
  if ((options.credits ?? 10_000_000) > 0) await store.addCredits(account.id, options.credits ?? 10_000_000);
  const created = await store.createKey(account.id, 'test');
  const auth = { authorization: `Bearer ${created.key}` };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    );
  const get = (path: string, headers: Record<string, string> = {}) =>
    gateway.fetch(new Request(`http://gateway.test${path}`, { headers: { ...auth, ...headers } }));
  return {
    gateway,
    store,
    fake,
    provider,
    limiter,
    clock,
    accountId: account.id,
    key: created.key,
    keyId: created.id,
    logs,
    post,
    get,
    inFlight: (accountId = account.id) => limiter.inFlight(limiterKeys.flight(accountId), clock.now()),
    balance: () => store.getBalance(account.id),
  };
}

/** A minimal valid chat body. */
export function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'fast', messages: [{ role: 'user', content: 'Hello there' }], ...extra };
}

/** Reads an SSE body to its end and returns the raw `data:` payloads and comment lines. */
export async function readEvents(response: Response): Promise<{ data: string[]; comments: string[]; text: string }> {
  const text = await response.text();
  const data: string[] = [];
  const comments: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('data: ')) data.push(line.slice(6));
    else if (line.startsWith(':')) comments.push(line);
  }
  return { data, comments, text };
}
