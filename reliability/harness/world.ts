/**
 * The pieces every scenario sets up: fake upstreams from @tollgate/testing on loopback, a model
 * catalogue that routes each model to its own fake, and accounts with keys made through the Store
 * API. Prices are 1 micro-dollar a token both ways, so a request's cost is its token count.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plan } from '@tollgate/core';
import type { Store } from '@tollgate/billing';
import { fakeOpenAI, type FakeOpenAIOptions, type FakeUpstream } from '@tollgate/testing';
import { listen, type Listening } from '@tollgate/testing/server';
import { recordSecret } from './secrets-log';

/** 1 µ$ a token both ways, no minimum hold: a request's cost is prompt + completion tokens. */
export const PRICE = { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 1_000_000, min_hold_micros: 0 };

/** The upstream credential every fake requires; the secrets scan looks for it in everything. */
export const UPSTREAM_KEY = `upstream-secret-${randomBytes(12).toString('hex')}`;
recordSecret(UPSTREAM_KEY);

/** A fake upstream on loopback, counting the reply bytes it produced per request. */
export interface Upstream {
  url: string;
  fake: FakeUpstream;
  /** Reply bytes the fake handed to its socket, per request in arrival order. */
  bytesOut: number[];
  close(): Promise<void>;
}

/** Options of {@link startUpstream} beyond the fake's own. */
export interface UpstreamOptions extends FakeOpenAIOptions {
  /**
   * Drops the connection once this many SSE events went out, after they reached the socket (the
   * fake's own `cut` errors its body at once, and a web stream that errors discards what its reader
   * had not read yet, so the gateway would see the cut before the events). Combine with a `drip`.
   */
  dropAfterEvents?: number;
}

/** Starts a fakeOpenAI (requiring {@link UPSTREAM_KEY}) on 127.0.0.1. */
export async function startUpstream(options: UpstreamOptions = {}): Promise<Upstream> {
  const fake = fakeOpenAI({ apiKey: UPSTREAM_KEY, ...options });
  const bytesOut: number[] = [];
  const server = await listen(async (request) => {
    const response = await fake.handle(request);
    if (!response.body) return response;
    const index = bytesOut.push(0) - 1;
    let events = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          if (options.dropAfterEvents !== undefined && events >= options.dropAfterEvents) {
            // Let the events already written reach the gateway before the connection drops.
            await new Promise((resolve) => setTimeout(resolve, 100));
            controller.error(new Error('connection dropped by the reliability suite'));
            return;
          }
          events += Buffer.from(chunk).toString('utf8').split('\n\n').length - 1;
          bytesOut[index] = (bytesOut[index] ?? 0) + chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: response.status, headers: response.headers });
  });
  // Requests are recorded for tests; a long run would keep them all.
  const trim = setInterval(() => fake.requests.splice(0, Math.max(0, fake.requests.length - 1_000)), 1_000);
  trim.unref();
  return {
    url: server.url,
    fake,
    bytesOut,
    close: async () => {
      clearInterval(trim);
      await server.close();
    },
  };
}

/** Starts a plain handler (a fake of the suite's own) on loopback. */
export function startHandler(handle: (request: Request) => Promise<Response>): Promise<Listening> {
  return listen(handle);
}

/** One catalogue model: its id, where its provider is, and its output cap. */
export interface ModelRoute {
  id: string;
  /** The provider's base URL (`…/v1`). */
  baseURL: string;
  maxOutputTokens?: number;
  plan?: Plan;
}

/** A temporary directory the caller removes with {@link removeDir}. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tollgate-reliability-${prefix}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Writes a catalogue of chat models, one provider each; returns the environment `tollgate serve` needs for it. */
export function catalogueEnv(dir: string, models: ModelRoute[]): Record<string, string> {
  const path = join(dir, 'catalogue.json');
  const providers: Record<string, unknown> = {};
  for (const model of models) providers[model.id] = { kind: 'openai-compatible', baseURL: model.baseURL, apiKeyEnv: 'RELIABILITY_UPSTREAM_KEY' };
  writeFileSync(
    path,
    JSON.stringify({
      providers,
      models: models.map((model) => ({
        id: model.id,
        type: 'chat',
        provider: model.id,
        upstream: 'gpt-4o-mini',
        plan: model.plan ?? 'free',
        max_output_tokens: model.maxOutputTokens ?? 1_000,
        price: PRICE,
      })),
    }),
  );
  return { TOLLGATE_CATALOGUE: path, RELIABILITY_UPSTREAM_KEY: UPSTREAM_KEY, TOLLGATE_DATA_DIR: dir };
}

/** An account the suite made, with its key. */
export interface TestAccount {
  id: string;
  key: string;
}

/** Creates `count` accounts of `plan` with `credits` µ$ and a key each; every key and its hash go to the secrets scan. */
export async function createAccounts(store: Store, count: number, plan: Plan, credits: number): Promise<TestAccount[]> {
  const accounts: TestAccount[] = [];
  for (let index = 0; index < count; index++) {
    const account = await store.createAccount({ plan });
    if (credits > 0) await store.addCredits(account.id, credits);
    const { key } = await store.createKey(account.id, 'reliability');
    recordSecret(key);
    recordSecret(createHash('sha256').update(key).digest('hex'));
    accounts.push({ id: account.id, key });
  }
  return accounts;
}
