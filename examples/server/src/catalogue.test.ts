import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore } from '@tollgate/billing';
import type { ModelConfig } from '@tollgate/core';
import { createGateway } from '@tollgate/gateway';
import { memoryLimiter } from '@tollgate/limiter';
import type { Provider } from '@tollgate/providers';
import { loadCatalogue, type Catalogue } from './catalogue';
import { ConfigError } from './config';

let dir: string;
let count = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-catalogue-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a catalogue file (an object is JSON-encoded, a string written as is) and returns its path. */
function file(content: unknown): string {
  const path = join(dir, `catalogue-${++count}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

const CHAT_PRICE = { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 100 };
const chatModel = (extra: Record<string, unknown> = {}) => ({
  id: 'fast',
  type: 'chat',
  provider: 'local',
  upstream: 'gpt-4o-mini',
  max_output_tokens: 4_096,
  price: CHAT_PRICE,
  ...extra,
});
const localProvider = { local: { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } };

/** The ConfigError message loading `content` as a catalogue file gives (fails the test if none). */
function errorOf(content: unknown, env: NodeJS.ProcessEnv = {}): string {
  const path = file(content);
  try {
    loadCatalogue(path, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.startsWith(`catalogue ${path}: `)).toBe(true);
    return message.slice(`catalogue ${path}: `.length);
  }
  throw new Error('expected a ConfigError');
}

const gatewayFor = (catalogue: Catalogue) =>
  createGateway({ version: 'tollgate/test', store: memoryStore(), limiter: memoryLimiter(), providers: catalogue.providers, models: catalogue.models });

/** Model ids with their provider and plan, in catalogue order. */
/** The price of a chat or image model (search models have none). */
const priceOf = (model: ModelConfig | undefined) => (model && model.type !== 'search' ? model.price : undefined);
/** A chat model's settings (the window and output limit), or a failure naming the model. */
const chatSettings = (model: ModelConfig) => {
  if (model.type !== 'chat') throw new Error(`${model.id} is not a chat model`);
  return [model.context_tokens, model.max_output_tokens];
};
/** The provider as a chat provider, or a failure. */
const chatProvider = (provider: Provider | undefined) => {
  if (!provider || !('chat' in provider)) throw new Error('not a chat provider');
  return provider;
};
const summary = (catalogue: Catalogue) => catalogue.models.map((model) => `${model.type}:${model.id}@${model.provider}/${model.plan}`);

describe('loadCatalogue without a file', () => {
  it('serves the local simulator with no provider key, every model labelled as not real', () => {
    const catalogue = loadCatalogue(undefined, {});
    expect(catalogue.simulator).toBe(true);
    expect(summary(catalogue)).toEqual([
      'chat:sim-fast@simulator/free',
      'chat:sim-pro@simulator/plus',
      'image:sim-image@simulator/free',
      'search:sim-search@simulator-search/free',
    ]);
    expect(catalogue.models.map((model) => model.label)).toEqual([
      'Local simulator: fast (not a real model)',
      'Local simulator: pro (not a real model)',
      'Local simulator: image (not a real model)',
      'Local simulator: web search (not a real engine)',
    ]);
    expect(Object.keys(catalogue.providers)).toEqual(['simulator', 'simulator-search']);
    expect(catalogue.providers.simulator!.kind).toBe('openai-compatible');
    expect(catalogue.providers['simulator-search']!.kind).toBe('searxng');
    expect(catalogue.characters).toEqual([]);
    // The whole simulator passes the gateway's own start checks (prices, routes, types).
    expect(typeof gatewayFor(catalogue).fetch).toBe('function');
  });

  it('answers from the simulator in process, with its explanatory text cut at the output limit', async () => {
    const catalogue = loadCatalogue(undefined, {});
    const reply = await chatProvider(catalogue.providers.simulator).chat(
      { model: 'sim-fast', messages: [{ role: 'user', content: 'hi' }], stream: false, max_completion_tokens: 3 },
      { upstream: 'sim-fast' },
    );
    expect(reply.choices[0]!.message.content).toBe('This is the');
    expect(reply.choices[0]!.finish_reason).toBe('length');
    expect(reply.usage!.completion_tokens).toBe(3);
  });

  it('treats empty provider variables as unset', () => {
    const catalogue = loadCatalogue(undefined, { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', OPENAI_COMPATIBLE_BASE_URL: '' });
    expect(catalogue.simulator).toBe(true);
  });

  it('OPENAI_API_KEY: two chat models and gpt-image-1 on the openai provider', () => {
    const catalogue = loadCatalogue(undefined, { OPENAI_API_KEY: 'sk-test' });
    expect(catalogue.simulator).toBe(false);
    expect(Object.keys(catalogue.providers)).toEqual(['openai']);
    expect(catalogue.providers.openai!.kind).toBe('openai-compatible');
    expect(summary(catalogue)).toEqual(['chat:gpt-4o-mini@openai/free', 'chat:gpt-4o@openai/plus', 'image:gpt-image-1@openai/plus']);
    expect(catalogue.models[0]).toMatchObject({
      upstream: 'gpt-4o-mini',
      max_output_tokens: 16_384,
      context_tokens: 128_000,
      price: { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000, min_hold_micros: 100 },
    });
    expect(priceOf(catalogue.models[2])).toEqual({ micros_per_image: 42_000, micros_per_reference: 10_000 });
    expect(typeof gatewayFor(catalogue).fetch).toBe('function');
  });

  it('ANTHROPIC_API_KEY: claude-sonnet-4-5 (plus) and claude-haiku-4-5 (free), 200k context, 64k output', () => {
    const catalogue = loadCatalogue(undefined, { ANTHROPIC_API_KEY: 'sk-ant-test' });
    expect(Object.keys(catalogue.providers)).toEqual(['anthropic']);
    expect(catalogue.providers.anthropic!.kind).toBe('anthropic');
    expect(summary(catalogue)).toEqual(['chat:claude-sonnet-4-5@anthropic/plus', 'chat:claude-haiku-4-5@anthropic/free']);
    for (const model of catalogue.models) expect(chatSettings(model)).toEqual([200_000, 64_000]);
    expect(priceOf(catalogue.models[0])).toEqual({ prompt_micros_per_mtok: 3_000_000, completion_micros_per_mtok: 15_000_000, min_hold_micros: 100 });
    expect(typeof gatewayFor(catalogue).fetch).toBe('function');
  });

  it('GEMINI_API_KEY: gemini-2.5-flash (free) and gemini-2.5-pro (plus)', () => {
    const catalogue = loadCatalogue(undefined, { GEMINI_API_KEY: 'gm-test' });
    expect(Object.keys(catalogue.providers)).toEqual(['gemini']);
    expect(catalogue.providers.gemini!.kind).toBe('gemini');
    expect(summary(catalogue)).toEqual(['chat:gemini-2.5-flash@gemini/free', 'chat:gemini-2.5-pro@gemini/plus']);
    for (const model of catalogue.models) expect(chatSettings(model)).toEqual([1_048_576, 65_536]);
    expect(typeof gatewayFor(catalogue).fetch).toBe('function');
  });

  it('OPENAI_COMPATIBLE_BASE_URL: one free model named by OPENAI_COMPATIBLE_MODEL (default "default")', () => {
    const unnamed = loadCatalogue(undefined, { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(summary(unnamed)).toEqual(['chat:default@compatible/free']);
    expect(priceOf(unnamed.models[0])).toEqual({ prompt_micros_per_mtok: 0, completion_micros_per_mtok: 0, min_hold_micros: 100 });
    const named = loadCatalogue(undefined, {
      OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_COMPATIBLE_API_KEY: 'k',
      OPENAI_COMPATIBLE_MODEL: 'qwen',
    });
    expect(summary(named)).toEqual(['chat:qwen@compatible/free']);
    expect(named.models[0]!.upstream).toBe('qwen');
  });

  it('all four variables together: every provider, models in a fixed order', () => {
    const catalogue = loadCatalogue(undefined, {
      OPENAI_API_KEY: 'a',
      ANTHROPIC_API_KEY: 'b',
      GEMINI_API_KEY: 'c',
      OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    expect(Object.keys(catalogue.providers)).toEqual(['openai', 'anthropic', 'gemini', 'compatible']);
    expect(catalogue.models.map((model) => model.id)).toEqual([
      'gpt-4o-mini',
      'gpt-4o',
      'gpt-image-1',
      'claude-sonnet-4-5',
      'claude-haiku-4-5',
      'gemini-2.5-flash',
      'gemini-2.5-pro',
      'default',
    ]);
    expect(typeof gatewayFor(catalogue).fetch).toBe('function');
  });
});

describe('loadCatalogue with a file', () => {
  it('loads a valid file: providers by kind, keys from the named variables, models and characters as written', () => {
    const path = file({
      providers: {
        openai: { kind: 'openai', apiKeyEnv: 'MY_OPENAI_KEY', zeroDataRetention: true, responsesApi: true },
        local: { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1', headers: { 'OpenAI-Organization': 'org-1' } },
        claude: { kind: 'anthropic', apiKeyEnv: 'MY_ANTHROPIC_KEY' },
        google: { kind: 'gemini', apiKeyEnv: 'MY_GEMINI_KEY' },
        searx: { kind: 'searxng', baseURL: 'http://127.0.0.1:8888' },
        brave: { kind: 'brave', apiKeyEnv: 'MY_BRAVE_KEY' },
      },
      models: [
        chatModel({
          provider: 'openai',
          routes: [
            { provider: 'local', upstream: 'qwen' },
            { provider: 'claude', upstream: 'claude-haiku-4-5' },
          ],
          retention: 'zdr',
          plan: 'plus',
        }),
        { id: 'draw', type: 'image', provider: 'google', upstream: 'gemini-2.5-flash-image', price: { micros_per_image: 39_000, micros_per_reference: 5_000 } },
        { id: 'web', type: 'search', provider: 'brave', routes: [{ provider: 'searx' }], micros_per_call: 5_000 },
      ],
      characters: ['You are Aria.'],
    });
    const env = { MY_OPENAI_KEY: 'sk-1', MY_ANTHROPIC_KEY: 'sk-2', MY_GEMINI_KEY: 'sk-3', MY_BRAVE_KEY: 'sk-4' };
    const catalogue = loadCatalogue(path, env);
    expect(catalogue.simulator).toBe(false);
    expect(Object.fromEntries(Object.entries(catalogue.providers).map(([name, provider]) => [name, [provider.kind, provider.zeroDataRetention]]))).toEqual({
      openai: ['openai-compatible', true],
      local: ['openai-compatible', false],
      claude: ['anthropic', false],
      google: ['gemini', false],
      searx: ['searxng', false],
      brave: ['brave', false],
    });
    // responsesApi: the native Responses calls exist on that provider only.
    expect('responses' in (catalogue.providers.openai ?? {})).toBe(true);
    expect('responses' in (catalogue.providers.local ?? {})).toBe(false);
    expect(summary(catalogue)).toEqual(['chat:fast@openai/plus', 'image:draw@google/undefined', 'search:web@brave/undefined']);
    expect(catalogue.models[0]!.routes).toEqual([
      { provider: 'local', upstream: 'qwen' },
      { provider: 'claude', upstream: 'claude-haiku-4-5' },
    ]);
    expect(catalogue.characters).toEqual(['You are Aria.']);
    expect(typeof gatewayFor(catalogue).fetch).toBe('function');
  });

  it('a file wins over provider variables in the environment (exactly its models)', () => {
    const catalogue = loadCatalogue(file({ providers: localProvider, models: [chatModel()] }), { OPENAI_API_KEY: 'sk-test', BRAVE_API_KEY: 'b' });
    expect(summary(catalogue)).toEqual(['chat:fast@local/undefined']);
    expect(Object.keys(catalogue.providers)).toEqual(['local']);
  });

  it('refuses a file that cannot be read or parsed, naming the path', () => {
    const missing = join(dir, 'missing.json');
    expect(() => loadCatalogue(missing, {})).toThrow(ConfigError);
    expect(() => loadCatalogue(missing, {})).toThrow(`catalogue ${missing}: ENOENT`);
    expect(errorOf('{"providers": {')).toMatch(/JSON/);
  });

  it('refuses a file of the wrong shape', () => {
    expect(errorOf([])).toBe('must hold a JSON object with "providers" and "models"');
    expect(errorOf({ models: [] })).toBe('"providers" must be an object');
    expect(errorOf({ providers: [], models: [] })).toBe('"providers" must be an object');
    expect(errorOf({ providers: {} })).toBe('"models" must be an array');
    expect(errorOf({ providers: {}, models: [[]] })).toBe('models[0] must be an object');
  });

  it('names the provider and the field of each provider error', () => {
    const kinds = 'openai-compatible, openai, anthropic, gemini, searxng, brave';
    const models: unknown[] = [];
    expect(errorOf({ providers: { x: { kind: 'mistral' } }, models })).toBe(`provider "x": "kind" must be one of ${kinds} (got "mistral")`);
    expect(errorOf({ providers: { x: {} }, models })).toBe(`provider "x": "kind" must be one of ${kinds} (got nothing)`);
    expect(errorOf({ providers: { x: null }, models })).toBe(`provider "x": "kind" must be one of ${kinds} (got nothing)`);
    expect(errorOf({ providers: { x: { kind: 'openai', baseURL: 8000 } }, models })).toBe('provider "x": "baseURL" must be a string');
    expect(errorOf({ providers: { x: { kind: 'openai', apiKeyEnv: 42 } }, models })).toBe('provider "x": "apiKeyEnv" must name an environment variable');
    expect(errorOf({ providers: { x: { kind: 'openai', apiKeyEnv: 'NOPE_KEY' } }, models })).toBe('provider "x": environment variable NOPE_KEY is not set');
    // An empty variable is as good as unset: it would otherwise start a provider with no key.
    expect(errorOf({ providers: { x: { kind: 'openai', apiKeyEnv: 'EMPTY_KEY' } }, models }, { EMPTY_KEY: '' })).toBe(
      'provider "x": environment variable EMPTY_KEY is not set',
    );
    expect(errorOf({ providers: { x: { kind: 'openai', zeroDataRetention: 'true' } }, models })).toBe(
      'provider "x": "zeroDataRetention" must be true or false',
    );
    expect(errorOf({ providers: { x: { kind: 'openai', responsesApi: 'true' } }, models })).toBe('provider "x": "responsesApi" must be true or false');
    expect(errorOf({ providers: { x: { kind: 'anthropic', responsesApi: true } }, models })).toBe(
      'provider "x": "responsesApi" is only for openai and openai-compatible providers',
    );
    expect(errorOf({ providers: { x: { kind: 'openai', headers: 'org-1' } }, models })).toBe('provider "x": "headers" must be an object of string values');
    expect(errorOf({ providers: { x: { kind: 'openai', headers: { 'x-n': 1 } } }, models })).toBe('provider "x": "headers" must be an object of string values');
  });

  it('reports a provider its factory refuses (brave without a key, searxng without baseURL) as a configuration error', () => {
    expect(errorOf({ providers: { b: { kind: 'brave' } }, models: [] })).toBe('provider "b": brave: apiKey is required (the X-Subscription-Token)');
    expect(errorOf({ providers: { s: { kind: 'searxng' } }, models: [] })).toBe('provider "s": searxng: baseURL is required (the self-hosted instance)');
  });

  it('names the model and the field of each model error', () => {
    const providers = localProvider;
    expect(errorOf({ providers, models: [{ type: 'chat' }] })).toBe('models[0]: "id" must be a non-empty string');
    expect(errorOf({ providers, models: [chatModel(), { id: '' }] })).toBe('models[1]: "id" must be a non-empty string');
    expect(errorOf({ providers, models: [chatModel({ type: 'embedding' })] })).toBe('model fast: "type" must be chat, image or search');
    expect(errorOf({ providers, models: [chatModel({ plan: 'gold' })] })).toBe('model fast: "plan" must be free, plus, pro or max');
    const noOutput = 'model fast: chat models need "max_output_tokens" (a positive integer)';
    expect(errorOf({ providers, models: [chatModel({ max_output_tokens: undefined })] })).toBe(noOutput);
    expect(errorOf({ providers, models: [chatModel({ max_output_tokens: 0 })] })).toBe(noOutput);
    expect(errorOf({ providers, models: [chatModel({ max_output_tokens: 1.5 })] })).toBe(noOutput);
    expect(errorOf({ providers, models: [chatModel({ max_output_tokens: '4096' })] })).toBe(noOutput);
    // References its provider never sends would be paid for and never seen: only gemini sends them.
    const painter = { id: 'painter', type: 'image', price: { micros_per_image: 40_000, micros_per_reference: 5_000 }, max_reference_images: 2 };
    const withGemini = { ...providers, google: { kind: 'gemini' } };
    expect(errorOf({ providers: withGemini, models: [{ ...painter, provider: 'google', routes: [{ provider: 'local' }] }] })).toBe(
      'model painter: provider "local" does not send reference images: set "max_reference_images" to 0, or route to a gemini provider',
    );
    const path = file({
      providers: withGemini,
      models: [
        { ...painter, provider: 'google' },
        { ...painter, id: 'plain', provider: 'local', max_reference_images: 0 },
      ],
    });
    expect(loadCatalogue(path, {}).models.map((model) => model.id)).toEqual(['painter', 'plain']);
  });

  it('refuses characters that are not an array of non-empty strings', () => {
    const base = { providers: localProvider, models: [chatModel()] };
    const message = '"characters" must be an array of non-empty strings';
    expect(errorOf({ ...base, characters: 'You are Aria.' })).toBe(message);
    expect(errorOf({ ...base, characters: ['You are Aria.', ''] })).toBe(message);
    expect(errorOf({ ...base, characters: [7] })).toBe(message);
    expect(loadCatalogue(file({ ...base, characters: [] }), {}).characters).toEqual([]);
  });
});

describe('createGateway on a loaded catalogue', () => {
  const load = (models: unknown[]) =>
    loadCatalogue(file({ providers: { ...localProvider, searx: { kind: 'searxng', baseURL: 'http://127.0.0.1:8888' } }, models }), {});

  it('rejects bad prices, naming the model and the field', () => {
    expect(() => gatewayFor(load([chatModel({ price: undefined })]))).toThrow(
      'model "fast": price is missing (a chat model needs prompt_micros_per_mtok, completion_micros_per_mtok, min_hold_micros)',
    );
    expect(() => gatewayFor(load([chatModel({ price: { ...CHAT_PRICE, min_hold_micros: undefined } })]))).toThrow(
      'model "fast": price.min_hold_micros must be a non-negative safe integer, got undefined',
    );
    expect(() => gatewayFor(load([chatModel({ price: { ...CHAT_PRICE, prompt_micros_per_mtok: 0.15 } })]))).toThrow(
      'model "fast": price.prompt_micros_per_mtok must be a non-negative safe integer, got 0.15',
    );
    expect(() => gatewayFor(load([chatModel({ price: { ...CHAT_PRICE, completion_micros_per_mtok: -1 } })]))).toThrow(
      'model "fast": price.completion_micros_per_mtok must be a non-negative safe integer, got -1',
    );
    expect(() => gatewayFor(load([chatModel({ price: { ...CHAT_PRICE, min_hold_micros: '100' } })]))).toThrow(
      'model "fast": price.min_hold_micros must be a non-negative safe integer, got "100"',
    );
    expect(() => gatewayFor(load([{ id: 'draw', type: 'image', provider: 'local', price: { micros_per_image: 40_000 } }]))).toThrow(
      'model "draw": price.micros_per_reference must be a non-negative safe integer, got undefined',
    );
    expect(() => gatewayFor(load([{ id: 'web', type: 'search', provider: 'searx', micros_per_call: 2.5 }]))).toThrow(
      'model "web": micros_per_call must be a non-negative safe integer, got 2.5',
    );
  });

  it('rejects routes to unknown providers or providers that do not serve the type, and ids given twice', () => {
    expect(() => gatewayFor(load([chatModel({ provider: 'nobody' })]))).toThrow('model fast: provider "nobody" is not configured');
    expect(() => gatewayFor(load([chatModel({ provider: 'searx' })]))).toThrow('model fast: provider "searx" does not serve chat models');
    expect(() => gatewayFor(load([chatModel(), chatModel()]))).toThrow('model fast: configured twice');
  });
});
