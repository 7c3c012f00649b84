import { readFileSync } from 'node:fs';
import { type ChatModelConfig, isPlan, type ModelConfig, modelRoutes } from '@tollgate/core';
import { anthropic, brave, gemini, openaiCompatible, searxng, type Provider, type ProviderSettings } from '@tollgate/providers';
import { createUpstreamFetch } from '@tollgate/node';
import { fakeOpenAI, fakeSearxng } from '@tollgate/testing';
import { ConfigError } from './config';

/** Providers, models and character prompts the server runs with. */
export interface Catalogue {
  providers: Record<string, Provider>;
  models: ModelConfig[];
  characters: string[];
  /** True when no real provider is configured and the local simulator serves. */
  simulator: boolean;
}

/** Connections per upstream origin a process opens at most, in use and idle, unless configured (`TOLLGATE_UPSTREAM_MAX_SOCKETS`). */
export const DEFAULT_UPSTREAM_MAX_SOCKETS = 256;

const pools = new Map<number, typeof fetch>();

/**
 * Every real provider reaches its upstream through a keep-alive node:http pool (docs/benchmarks.md:
 * faster than the global fetch): one per connection cap, shared by every catalogue of the process.
 * A call beyond the cap waits for a connection of its origin to come free.
 */
function upstreamFetchFor(maxSockets: number): typeof fetch {
  let pool = pools.get(maxSockets);
  if (pool === undefined) {
    pool = createUpstreamFetch({ maxSockets }).fetch;
    pools.set(maxSockets, pool);
  }
  return pool;
}

/** Options of {@link loadCatalogue}. */
export interface CatalogueOptions {
  /** Connections per upstream origin (default {@link DEFAULT_UPSTREAM_MAX_SOCKETS}). */
  upstreamMaxSockets?: number;
}

const FACTORIES: Record<string, (settings: ProviderSettings) => Provider> = {
  'openai-compatible': openaiCompatible,
  openai: openaiCompatible,
  anthropic,
  gemini,
  searxng,
  brave,
};

/**
 * The catalogue: a catalogue file when `TOLLGATE_CATALOGUE` names one; else real providers from
 * provider keys in the environment with a built-in model list; else the local simulator. Search
 * engines in the environment (`SEARXNG_URL`, `BRAVE_API_KEY`) add a `web-search` model to either
 * of the last two, ahead of the simulator's `sim-search` so it is the default search model.
 */
export function loadCatalogue(path: string | undefined, env: NodeJS.ProcessEnv = process.env, options: CatalogueOptions = {}): Catalogue {
  const upstreamFetch = upstreamFetchFor(options.upstreamMaxSockets ?? DEFAULT_UPSTREAM_MAX_SOCKETS);
  if (path) return readCatalogueFile(path, env, upstreamFetch);
  const search = environmentSearch(env, upstreamFetch);
  const base = environmentCatalogue(env, upstreamFetch) ?? simulatorCatalogue();
  if (!search) return base;
  const isSearch = (model: ModelConfig) => model.type === 'search';
  return {
    ...base,
    providers: { ...base.providers, ...search.providers },
    models: [...base.models.filter((model) => !isSearch(model)), search.model, ...base.models.filter(isSearch)],
  };
}

/** What a web search costs when its engine comes from the environment: Brave's list price, $5 per 1,000 calls. */
export const ENV_SEARCH_MICROS_PER_CALL = 5_000;

/**
 * The `web-search` model from search engines in the environment: SearXNG at `SEARXNG_URL`
 * (self-hosted, no key) and/or Brave with `BRAVE_API_KEY`. With both, SearXNG is the first route
 * and Brave the failover when SearXNG did not take the call (refused, busy, unavailable).
 */
function environmentSearch(env: NodeJS.ProcessEnv, upstreamFetch: typeof fetch): { providers: Record<string, Provider>; model: ModelConfig } | undefined {
  const providers: Record<string, Provider> = {};
  if (env.SEARXNG_URL) {
    let url: URL | undefined;
    try {
      url = new URL(env.SEARXNG_URL);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError('SEARXNG_URL must be the http(s) address of a SearXNG instance, e.g. http://127.0.0.1:8888');
    }
    providers.searxng = searxng({ baseURL: env.SEARXNG_URL, fetch: upstreamFetch });
  }
  if (env.BRAVE_API_KEY) providers.brave = brave({ apiKey: env.BRAVE_API_KEY, fetch: upstreamFetch });
  const [first, ...others] = Object.keys(providers);
  if (first === undefined) return undefined;
  const model: ModelConfig = {
    id: 'web-search',
    type: 'search',
    provider: first,
    upstream: 'web-search',
    owned_by: first,
    tier: 'anon',
    label: 'Web search',
    plan: 'free',
    included: { from: 'plus', quota: 'web_calls' },
    micros_per_call: ENV_SEARCH_MICROS_PER_CALL,
    ...(others.length > 0 ? { routes: others.map((provider) => ({ provider, upstream: 'web-search' })) } : {}),
  };
  return { providers, model };
}

/** Local simulator models backed by the fakes of @tollgate/testing: free to run, clearly labelled. */
export function simulatorCatalogue(): Catalogue {
  // Paced like a real model (one word every 10 ms), and as long as the output limit allows.
  const chat = fakeOpenAI({ reply: simulatorReply, faults: () => ({ kind: 'drip', delayMs: 10 }) });
  const search = fakeSearxng();
  const chatPrice = { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 100 };
  const simulatorChat = {
    type: 'chat' as const,
    provider: 'simulator',
    owned_by: 'tollgate-simulator',
    tier: 'anon',
    retention: 'zdr',
    input_modalities: ['text', 'image'],
    context_tokens: 128_000,
    max_output_tokens: 4_096,
    default_output_tokens: 64,
    compact_at_tokens: 100_000,
    price: chatPrice,
  };
  return {
    simulator: true,
    characters: [],
    providers: {
      simulator: openaiCompatible({ baseURL: 'http://simulator.invalid/v1', apiKey: 'simulator', fetch: chat.fetch, zeroDataRetention: true }),
      'simulator-search': searxng({ baseURL: 'http://simulator-search.invalid', fetch: search.fetch }),
    },
    models: [
      { ...simulatorChat, id: 'sim-fast', upstream: 'sim-fast', label: 'Local simulator: fast (not a real model)', plan: 'free' },
      {
        ...simulatorChat,
        id: 'sim-pro',
        upstream: 'sim-pro',
        label: 'Local simulator: pro (not a real model)',
        plan: 'plus',
        price: { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 4_000_000, min_hold_micros: 500 },
      },
      {
        id: 'sim-image',
        type: 'image',
        provider: 'simulator',
        upstream: 'sim-image',
        owned_by: 'tollgate-simulator',
        tier: 'anon',
        label: 'Local simulator: image (not a real model)',
        plan: 'free',
        // No references: the simulator's OpenAI-compatible images endpoint would never see them.
        price: { micros_per_image: 40_000, micros_per_reference: 10_000 },
        resolutions: ['1k', '2k'],
        qualities: ['low', 'medium', 'high'],
      },
      {
        id: 'sim-search',
        type: 'search',
        provider: 'simulator-search',
        owned_by: 'tollgate-simulator',
        tier: 'anon',
        label: 'Local simulator: web search (not a real engine)',
        plan: 'free',
        included: { from: 'plus', quota: 'web_calls' },
        micros_per_call: 5_000,
      },
    ],
  };
}

const SIMULATOR_TEXT = (
  'This is the Tollgate local simulator, not a real model. It answers every prompt with this text, ' +
  'paced like a streaming model, so you can try the API, the SDKs, billing and limits without a provider key. ' +
  'Set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, or a catalogue file, to serve real models.'
).split(' ');

/** Up to 400 words of the simulator's text; the fake cuts it at the request's output limit. */
function simulatorReply(): string {
  const words: string[] = [];
  while (words.length < 400) words.push(...SIMULATOR_TEXT);
  return words.slice(0, 400).join(' ');
}

function environmentCatalogue(env: NodeJS.ProcessEnv, upstreamFetch: typeof fetch): Catalogue | undefined {
  const providers: Record<string, Provider> = {};
  const models: ModelConfig[] = [];
  const chat = (id: string, provider: string, prompt: number, completion: number, extra: Partial<ChatModelConfig> = {}): ChatModelConfig => ({
    id,
    type: 'chat',
    provider,
    upstream: id,
    owned_by: provider,
    tier: 'anon',
    label: id,
    plan: 'free',
    input_modalities: ['text', 'image'],
    context_tokens: 128_000,
    max_output_tokens: 16_384,
    price: { prompt_micros_per_mtok: prompt, completion_micros_per_mtok: completion, min_hold_micros: 100 },
    ...extra,
  });
  if (env.OPENAI_API_KEY) {
    providers.openai = openaiCompatible({ baseURL: 'https://api.openai.com/v1', apiKey: env.OPENAI_API_KEY, fetch: upstreamFetch });
    models.push(chat('gpt-4o-mini', 'openai', 150_000, 600_000), chat('gpt-4o', 'openai', 2_500_000, 10_000_000, { plan: 'plus' }));
    models.push({
      id: 'gpt-image-1',
      type: 'image',
      provider: 'openai',
      owned_by: 'openai',
      tier: 'anon',
      label: 'gpt-image-1',
      plan: 'plus',
      price: { micros_per_image: 42_000, micros_per_reference: 10_000 },
      resolutions: ['1k'],
      qualities: ['low', 'medium', 'high'],
    });
  }
  if (env.ANTHROPIC_API_KEY) {
    providers.anthropic = anthropic({ apiKey: env.ANTHROPIC_API_KEY, fetch: upstreamFetch });
    models.push(chat('claude-sonnet-4-5', 'anthropic', 3_000_000, 15_000_000, { plan: 'plus', context_tokens: 200_000, max_output_tokens: 64_000 }));
    models.push(chat('claude-haiku-4-5', 'anthropic', 1_000_000, 5_000_000, { context_tokens: 200_000, max_output_tokens: 64_000 }));
  }
  if (env.GEMINI_API_KEY) {
    providers.gemini = gemini({ apiKey: env.GEMINI_API_KEY, fetch: upstreamFetch });
    models.push(chat('gemini-2.5-flash', 'gemini', 300_000, 2_500_000, { context_tokens: 1_048_576, max_output_tokens: 65_536 }));
    models.push(chat('gemini-2.5-pro', 'gemini', 1_250_000, 10_000_000, { plan: 'plus', context_tokens: 1_048_576, max_output_tokens: 65_536 }));
  }
  if (env.OPENAI_COMPATIBLE_BASE_URL) {
    providers.compatible = openaiCompatible({ baseURL: env.OPENAI_COMPATIBLE_BASE_URL, apiKey: env.OPENAI_COMPATIBLE_API_KEY ?? '', fetch: upstreamFetch });
    const id = env.OPENAI_COMPATIBLE_MODEL ?? 'default';
    models.push(chat(id, 'compatible', 0, 0));
  }
  if (models.length === 0) return undefined;
  return { providers, models, characters: [], simulator: false };
}

function readCatalogueFile(path: string, env: NodeJS.ProcessEnv, upstreamFetch: typeof fetch): Catalogue {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`catalogue ${path}: ${(error as Error).message}`);
  }
  const fail = (message: string): never => {
    throw new ConfigError(`catalogue ${path}: ${message}`);
  };
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail('must hold a JSON object with "providers" and "models"');
  const file = data as { providers?: unknown; models?: unknown; characters?: unknown };
  if (typeof file.providers !== 'object' || file.providers === null || Array.isArray(file.providers)) fail('"providers" must be an object');
  if (!Array.isArray(file.models)) fail('"models" must be an array');
  const providers: Record<string, Provider> = {};
  for (const [name, value] of Object.entries(file.providers as Record<string, unknown>)) {
    const spec = value as { kind?: unknown; baseURL?: unknown; apiKeyEnv?: unknown; zeroDataRetention?: unknown; responsesApi?: unknown; headers?: unknown };
    const factory =
      (typeof spec?.kind === 'string' ? FACTORIES[spec.kind] : undefined) ??
      fail(`provider "${name}": "kind" must be one of ${Object.keys(FACTORIES).join(', ')} (got ${JSON.stringify(spec?.kind) ?? 'nothing'})`);
    const settings: ProviderSettings = { fetch: upstreamFetch };
    if (spec.baseURL !== undefined) {
      if (typeof spec.baseURL !== 'string') fail(`provider "${name}": "baseURL" must be a string`);
      settings.baseURL = spec.baseURL as string;
    }
    if (spec.apiKeyEnv !== undefined) {
      if (typeof spec.apiKeyEnv !== 'string') fail(`provider "${name}": "apiKeyEnv" must name an environment variable`);
      const key = env[spec.apiKeyEnv as string];
      if (!key) fail(`provider "${name}": environment variable ${String(spec.apiKeyEnv)} is not set`);
      settings.apiKey = key;
    }
    if (spec.zeroDataRetention !== undefined) {
      // A string "true" silently meaning false would send zdr prompts nowhere, or "false" meaning true anywhere.
      if (typeof spec.zeroDataRetention !== 'boolean') fail(`provider "${name}": "zeroDataRetention" must be true or false`);
      settings.zeroDataRetention = spec.zeroDataRetention as boolean;
    }
    if (spec.responsesApi !== undefined) {
      // Only the OpenAI-compatible adapter has native Responses calls; elsewhere the flag would do nothing, silently.
      if (factory !== openaiCompatible) fail(`provider "${name}": "responsesApi" is only for openai and openai-compatible providers`);
      if (typeof spec.responsesApi !== 'boolean') fail(`provider "${name}": "responsesApi" must be true or false`);
      settings.responsesApi = spec.responsesApi as boolean;
    }
    if (spec.headers !== undefined) {
      const headers = spec.headers;
      if (typeof headers !== 'object' || headers === null || Array.isArray(headers) || Object.values(headers).some((value) => typeof value !== 'string')) {
        fail(`provider "${name}": "headers" must be an object of string values`);
      }
      settings.headers = headers as Record<string, string>;
    }
    // The factories refuse settings they cannot run with (brave without a key, searxng without
    // baseURL); say so as a configuration error naming the provider, not a stack trace.
    try {
      providers[name] = factory(settings);
    } catch (error) {
      fail(`provider "${name}": ${(error as Error).message}`);
    }
  }
  const models = (file.models as unknown[]).map((model, index) => {
    if (typeof model !== 'object' || model === null || Array.isArray(model)) fail(`models[${index}] must be an object`);
    const config = model as ModelConfig;
    if (typeof config.id !== 'string' || config.id.length === 0) fail(`models[${index}]: "id" must be a non-empty string`);
    const { id, type } = config;
    if (type !== 'chat' && type !== 'image' && type !== 'search') fail(`model ${id}: "type" must be chat, image or search`);
    if (config.plan !== undefined && !isPlan(config.plan)) fail(`model ${config.id}: "plan" must be free, plus, pro or max`);
    if (config.type === 'chat' && !(Number.isSafeInteger(config.max_output_tokens) && (config.max_output_tokens ?? 0) >= 1)) {
      fail(`model ${config.id}: chat models need "max_output_tokens" (a positive integer)`);
    }
    // References its provider never sends would be paid for and never seen (an OpenAI-compatible
    // generations endpoint takes none): only providers that send them (gemini) may serve them.
    if (config.type === 'image' && (config.max_reference_images ?? 0) > 0) {
      for (const route of modelRoutes(config)) {
        const provider = Object.hasOwn(providers, route.provider) ? providers[route.provider] : undefined;
        if (provider && !('referenceImages' in provider && provider.referenceImages === true)) {
          fail(
            `model ${config.id}: provider "${route.provider}" does not send reference images: set "max_reference_images" to 0, or route to a gemini provider`,
          );
        }
      }
    }
    return config;
  });
  const characters = file.characters ?? [];
  if (!Array.isArray(characters) || characters.some((prompt) => typeof prompt !== 'string' || prompt.length === 0))
    fail('"characters" must be an array of non-empty strings');
  return { providers, models, characters: characters as string[], simulator: false };
}
