import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAnthropic, fakeGemini, fakeOpenAI, makePng } from '@tollgate/testing';
import { listen, type Listening } from '@tollgate/testing/server';
import { loadConfig } from './config';
import { startServer, type RunningServer } from './start-server';

// The three real provider families, each behind its wire-accurate fake on a loopback port, reached
// by the real adapters through a catalogue file, and driven through the real server by the openai SDK.

type Fake = ReturnType<typeof fakeAnthropic>;
type Price = { prompt_micros_per_mtok: number; completion_micros_per_mtok: number; min_hold_micros: number };

const KEYS = { anthropic: 'sk-ant-e2e-4b1f', gemini: 'AIza-e2e-77c2', openai: 'sk-compat-e2e-90de' };
const REPLIES = {
  anthropic: 'Hello from the fake Claude, over HTTP.',
  gemini: 'Hello from the fake Gemini, over HTTP.',
  openai: 'Hello from the fake compatible server.',
};
const THINKING = 'First I weigh the question, then I answer it briefly.'; // 10 words: 10 fake tokens
const WEATHER: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const TOOL_CALLS = [{ name: 'get_weather', arguments: '{"city":"Paris"}' }];
const CONTEXT = 2_000; // every fake refuses prompts over this many tokens

const price = (prompt: number, completion: number): Price => ({ prompt_micros_per_mtok: prompt, completion_micros_per_mtok: completion, min_hold_micros: 100 });
const chatModel = (id: string, provider: string, upstream: string, modelPrice: Price, extra: Record<string, unknown> = {}) => ({
  id,
  type: 'chat',
  provider,
  upstream,
  owned_by: provider,
  tier: 'anon',
  label: id,
  plan: 'free',
  input_modalities: ['text', 'image'],
  context_tokens: 128_000,
  max_output_tokens: 8_192,
  default_output_tokens: 1_024,
  price: modelPrice,
  ...extra,
});
const PRICES = {
  claude: price(3_000_000, 15_000_000),
  gemini: price(300_000, 2_500_000),
  compat: price(200_000, 800_000),
  resilient: price(1_000_000, 5_000_000),
};

/** What the server charges for a usage: ceil((prompt x price + completion x price) / 1e6) micros. */
const costOf = (modelPrice: Price, usage: { prompt_tokens: number; completion_tokens: number }) =>
  Math.ceil((usage.prompt_tokens * modelPrice.prompt_micros_per_mtok + usage.completion_tokens * modelPrice.completion_micros_per_mtok) / 1_000_000);

const fakes = {
  anthropic: fakeAnthropic({ apiKey: KEYS.anthropic, reply: REPLIES.anthropic, thinking: THINKING, toolCalls: TOOL_CALLS, contextTokens: CONTEXT }),
  gemini: fakeGemini({ apiKey: KEYS.gemini, reply: REPLIES.gemini, thinking: THINKING, toolCalls: TOOL_CALLS, contextTokens: CONTEXT }),
  openai: fakeOpenAI({ apiKey: KEYS.openai, reply: REPLIES.openai, thinking: THINKING, toolCalls: TOOL_CALLS, contextTokens: CONTEXT }),
};
const listeners: Partial<Record<keyof typeof fakes, Listening>> = {};
const ENV_NAMES = [
  'E2E_ANTHROPIC_KEY',
  'E2E_GEMINI_KEY',
  'E2E_COMPAT_KEY',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GEMINI_API_KEY',
  'OPENAI_COMPATIBLE_BASE_URL',
  'OPENAI_COMPATIBLE_API_KEY',
  'OPENAI_COMPATIBLE_MODEL',
  'SEARXNG_URL',
  'BRAVE_API_KEY',
];
const savedEnv = Object.fromEntries(ENV_NAMES.map((name) => [name, process.env[name]]));
const dirs: string[] = [];

beforeAll(async () => {
  for (const name of ENV_NAMES) delete process.env[name];
  for (const family of ['anthropic', 'gemini', 'openai'] as const) listeners[family] = await listen(fakes[family].handle);
});

afterAll(async () => {
  await Promise.all(Object.values(listeners).map((listener) => listener.close()));
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-providers-'));
  dirs.push(dataDir);
  return startServer(loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir, ...env }), { log: () => undefined });
}

async function accountOf(server: RunningServer, key: string) {
  return (await server.store.findKey(createHash('sha256').update(key).digest('hex')))!.account;
}

/** Runs `call`, waits for the server to settle, and returns its result with the micros it cost. */
async function charged<T>(server: RunningServer, key: string, call: () => Promise<T>): Promise<{ result: T; micros: number }> {
  const { id } = await accountOf(server, key);
  const before = await server.store.getBalance(id);
  const result = await call();
  await server.gateway.idle();
  const after = await server.store.getBalance(id);
  expect(after.held).toBe(0);
  return { result, micros: before.balance - after.balance };
}

describe('real provider families through a catalogue file', () => {
  let server: RunningServer;
  let demo: OpenAI;

  beforeAll(async () => {
    process.env.E2E_ANTHROPIC_KEY = KEYS.anthropic;
    process.env.E2E_GEMINI_KEY = KEYS.gemini;
    process.env.E2E_COMPAT_KEY = KEYS.openai;
    const catalogue = {
      providers: {
        claude: { kind: 'anthropic', baseURL: `${listeners.anthropic!.url}/v1`, apiKeyEnv: 'E2E_ANTHROPIC_KEY' },
        google: { kind: 'gemini', baseURL: `${listeners.gemini!.url}/v1beta`, apiKeyEnv: 'E2E_GEMINI_KEY' },
        local: { kind: 'openai-compatible', baseURL: `${listeners.openai!.url}/v1`, apiKeyEnv: 'E2E_COMPAT_KEY' },
      },
      models: [
        chatModel('claude', 'claude', 'claude-sonnet-4-5', PRICES.claude),
        chatModel('gemini', 'google', 'gemini-2.5-flash', PRICES.gemini),
        chatModel('compat', 'local', 'qwen2.5-7b-instruct', PRICES.compat),
        chatModel('resilient', 'claude', 'claude-haiku-4-5', PRICES.resilient, { routes: [{ provider: 'google', upstream: 'gemini-2.5-flash' }] }),
      ],
    };
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-catalogue-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'catalogue.json'), JSON.stringify(catalogue));
    server = await start({ TOLLGATE_CATALOGUE: join(dir, 'catalogue.json') });
    demo = new OpenAI({ apiKey: server.demoKey!, baseURL: `${server.url}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('lists the catalogue models', async () => {
    const page = await demo.models.list();
    expect(page.data.map((model) => model.id)).toEqual(['claude', 'gemini', 'compat', 'resilient']);
  });

  const FAMILIES = [
    { family: 'anthropic', model: 'claude', upstream: 'claude-sonnet-4-5' },
    { family: 'gemini', model: 'gemini', upstream: 'gemini-2.5-flash' },
    { family: 'openai', model: 'compat', upstream: 'qwen2.5-7b-instruct' },
  ] as const;

  describe.each(FAMILIES)('$family ($model)', ({ family, model, upstream }) => {
    const fake = fakes[family] as Fake;
    const modelPrice = PRICES[model];
    const reply = REPLIES[family];
    const last = () => fake.requests.at(-1)!;
    const lastBody = () => last().body as Record<string, any>;
    const ask: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello to the gateway tests please' }];
    let key: string;
    let client: OpenAI;
    let plain: { prompt_tokens: number; completion_tokens: number };

    beforeAll(async () => {
      // An account of its own on the max plan: the file sends more requests than the demo plan's burst of 13.
      const account = await server.store.createAccount({ plan: 'max' });
      await server.store.addCredits(account.id, 50_000_000, { note: 'e2e' });
      key = (await server.store.createKey(account.id, `e2e-${family}`)).key;
      client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
    });

    it('answers a chat with the right credential and upstream model, and charges usage x prices', async () => {
      const { result, micros } = await charged(server, key, () => client.chat.completions.create({ model, messages: ask }));
      expect(result.model).toBe(model);
      expect(result.choices[0]!.message.content).toBe(reply);
      expect(result.choices[0]!.finish_reason).toBe('stop');
      expect(result.usage!.completion_tokens).toBe(reply.split(' ').length);
      expect(result.usage!.prompt_tokens).toBeGreaterThan(0);
      expect(micros).toBe(costOf(modelPrice, result.usage!));
      plain = result.usage!;
      const headers = last().headers;
      if (family === 'anthropic') expect([headers['x-api-key'], lastBody().model]).toEqual([KEYS.anthropic, upstream]);
      if (family === 'gemini')
        expect([headers['x-goog-api-key'], new URL(last().url).pathname]).toEqual([KEYS.gemini, `/v1beta/models/${upstream}:generateContent`]);
      if (family === 'openai') expect([headers.authorization, lastBody().model]).toEqual([`Bearer ${KEYS.openai}`, upstream]);
    });

    it('streams text then one usage chunk when asked, and charges that usage', async () => {
      const { result, micros } = await charged(server, key, async () => {
        const stream = await client.chat.completions.create({ model, messages: ask, stream: true, stream_options: { include_usage: true } });
        const seen = { text: '', usage: [] as OpenAI.CompletionUsage[], finish: [] as string[] };
        for await (const chunk of stream) {
          expect(chunk.model).toBe(model);
          if (chunk.usage) {
            expect(chunk.choices).toEqual([]);
            seen.usage.push(chunk.usage);
          }
          seen.text += chunk.choices[0]?.delta.content ?? '';
          if (chunk.choices[0]?.finish_reason) seen.finish.push(chunk.choices[0].finish_reason);
        }
        return seen;
      });
      expect(result.text).toBe(reply);
      expect(result.finish).toEqual(['stop']);
      expect(result.usage).toHaveLength(1);
      expect([result.usage[0]!.prompt_tokens, result.usage[0]!.completion_tokens]).toEqual([plain.prompt_tokens, plain.completion_tokens]);
      expect(micros).toBe(costOf(modelPrice, result.usage[0]!));
    });

    it('charges a stream without a usage chunk by the usage the upstream reported', async () => {
      const { result, micros } = await charged(server, key, async () => {
        const stream = await client.chat.completions.create({ model, messages: ask, stream: true });
        let usageChunks = 0;
        for await (const chunk of stream) if (chunk.usage) usageChunks++;
        return usageChunks;
      });
      expect(result).toBe(0);
      expect(micros).toBe(costOf(modelPrice, plain));
    });

    it('round-trips a tool call: assistant tool_calls, then the tool result in the upstream wire format', async () => {
      const first = await charged(server, key, () =>
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: [WEATHER] }),
      );
      const choice = first.result.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(choice.message.tool_calls).toHaveLength(1);
      expect([call.type, call.function.name, JSON.parse(call.function.arguments)]).toEqual(['function', 'get_weather', { city: 'Paris' }]);
      expect(first.micros).toBe(costOf(modelPrice, first.result.usage!));

      const messages: ChatCompletionMessageParam[] = [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: choice.message.content, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"temp_c":18}' },
      ];
      const second = await charged(server, key, () => client.chat.completions.create({ model, messages, tools: [WEATHER] }));
      expect(second.result.choices[0]!.message.content).toBe(reply);
      expect(second.result.choices[0]!.finish_reason).toBe('stop');
      expect(second.micros).toBe(costOf(modelPrice, second.result.usage!));
      const body = lastBody();
      if (family === 'anthropic') {
        expect(body.messages[1].content).toContainEqual({ type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } });
        expect(body.messages[2]).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id }] });
      }
      if (family === 'gemini') {
        expect(body.contents[1].role).toBe('model');
        expect(body.contents[1].parts).toContainEqual(expect.objectContaining({ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }));
        expect(body.contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { temp_c: 18 } } });
      }
      if (family === 'openai') expect(body.messages[2]).toEqual({ role: 'tool', tool_call_id: call.id, content: '{"temp_c":18}' });
    });

    it('streams a tool call whose argument deltas assemble to the arguments', async () => {
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [WEATHER],
        stream: true,
      });
      let name = '';
      let args = '';
      let finish: string | null = null;
      for await (const chunk of stream) {
        for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
          expect(delta.index).toBe(0);
          name += delta.function?.name ?? '';
          args += delta.function?.arguments ?? '';
        }
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      expect([name, JSON.parse(args), finish]).toEqual(['get_weather', { city: 'Paris' }, 'tool_calls']);
    });

    it("sends an inline image part to the upstream as that family's image block", async () => {
      const png = Buffer.from(await makePng(16, 16, { seed: 3 })).toString('base64');
      const { result, micros } = await charged(server, key, () =>
        client.chat.completions.create({
          model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this picture?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
              ],
            },
          ],
        }),
      );
      expect(result.choices[0]!.message.content).toBe(reply);
      expect(micros).toBe(costOf(modelPrice, result.usage!));
      const parts = family === 'gemini' ? lastBody().contents[0].parts : lastBody().messages[0].content;
      if (family === 'anthropic') expect(parts).toContainEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } });
      if (family === 'gemini') expect(parts).toContainEqual({ inlineData: { mimeType: 'image/png', data: png } });
      if (family === 'openai') expect(parts).toContainEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } });
    });

    it("maps reasoning_effort to the family's thinking setting and bills the thinking as completion", async () => {
      const { result, micros } = await charged(server, key, () =>
        client.chat.completions.create({ model, messages: ask, reasoning_effort: 'low', max_completion_tokens: 4_096 }),
      );
      expect(result.choices[0]!.message.content).toBe(reply);
      // The thinking is billed, never shown: 10 more completion tokens than the same answer without it.
      expect(result.usage!.completion_tokens).toBe(plain.completion_tokens + 10);
      expect(micros).toBe(costOf(modelPrice, result.usage!));
      const body = lastBody();
      if (family === 'anthropic') {
        expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1_024 });
        expect(body.max_tokens).toBe(4_096);
      }
      if (family === 'gemini') {
        expect(body.generationConfig.thinkingConfig).toMatchObject({ thinkingBudget: 1_024 });
        expect(result.usage!.completion_tokens_details!.reasoning_tokens).toBe(10);
      }
      if (family === 'openai') {
        expect(body.reasoning_effort).toBe('low');
        expect(result.usage!.completion_tokens_details!.reasoning_tokens).toBe(10);
      }
    });

    it("answers the upstream's context-length refusal as 400 context_length_exceeded, free of charge", async () => {
      const requests = fake.requests.length;
      const long = Array.from({ length: CONTEXT + 200 }, (_, index) => `word${index}`).join(' ');
      const { result, micros } = await charged(server, key, () =>
        client.chat.completions.create({ model, messages: [{ role: 'user', content: long }] }).then(
          () => undefined,
          (error: unknown) => error,
        ),
      );
      expect(result).toBeInstanceOf(OpenAI.BadRequestError);
      const error = result as InstanceType<typeof OpenAI.BadRequestError>;
      expect([error.status, error.code]).toEqual([400, 'context_length_exceeded']);
      expect(fake.requests.length).toBe(requests + 1);
      expect(micros).toBe(0);
    });
  });

  describe('failover: routes [anthropic, gemini]', () => {
    it("tries gemini when anthropic answers 529 overloaded, and bills the answer at the model's price", async () => {
      const before = { anthropic: fakes.anthropic.requests.length, gemini: fakes.gemini.requests.length };
      fakes.anthropic.setFaults([{ kind: 'status', status: 529 }]);
      const { result, micros } = await charged(server, server.demoKey!, () =>
        demo.chat.completions.create({ model: 'resilient', messages: [{ role: 'user', content: 'Are you there?' }] }),
      );
      expect(result.model).toBe('resilient');
      expect(result.choices[0]!.message.content).toBe(REPLIES.gemini);
      expect(micros).toBe(costOf(PRICES.resilient, result.usage!));
      expect(fakes.anthropic.requests.length).toBe(before.anthropic + 1);
      expect((fakes.anthropic.requests.at(-1)!.body as { model: string }).model).toBe('claude-haiku-4-5');
      expect(fakes.gemini.requests.length).toBe(before.gemini + 1);
      expect(new URL(fakes.gemini.requests.at(-1)!.url).pathname).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    });

    it('fails over a stream before its first byte', async () => {
      fakes.anthropic.setFaults([{ kind: 'status', status: 529 }]);
      const { result, micros } = await charged(server, server.demoKey!, async () => {
        const stream = await demo.chat.completions.create({
          model: 'resilient',
          messages: [{ role: 'user', content: 'Still there?' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = '';
        let usage: OpenAI.CompletionUsage | undefined;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? '';
          usage = chunk.usage ?? usage;
        }
        return { text, usage: usage! };
      });
      expect(result.text).toBe(REPLIES.gemini);
      expect(micros).toBe(costOf(PRICES.resilient, result.usage));
    });

    it('answers from anthropic itself when it is healthy', async () => {
      const result = await demo.chat.completions.create({ model: 'resilient', messages: [{ role: 'user', content: 'Hi' }] });
      expect(result.choices[0]!.message.content).toBe(REPLIES.anthropic);
    });
  });
});

describe('OPENAI_COMPATIBLE_BASE_URL in the environment (no catalogue)', () => {
  let server: RunningServer;

  beforeAll(async () => {
    process.env.OPENAI_COMPATIBLE_BASE_URL = `${listeners.openai!.url}/v1`;
    process.env.OPENAI_COMPATIBLE_API_KEY = KEYS.openai;
    process.env.OPENAI_COMPATIBLE_MODEL = 'qwen-local';
    server = await start({});
  });

  afterAll(async () => {
    await server?.close();
    delete process.env.OPENAI_COMPATIBLE_BASE_URL;
    delete process.env.OPENAI_COMPATIBLE_API_KEY;
    delete process.env.OPENAI_COMPATIBLE_MODEL;
  });

  it('serves the one compatible model with the key from the environment, priced 0', async () => {
    const client = new OpenAI({ apiKey: server.demoKey!, baseURL: `${server.url}/v1`, maxRetries: 0 });
    expect((await client.models.list()).data.map((model) => model.id)).toEqual(['qwen-local']);
    const { result, micros } = await charged(server, server.demoKey!, () =>
      client.chat.completions.create({ model: 'qwen-local', messages: [{ role: 'user', content: 'Hello' }] }),
    );
    expect(result.choices[0]!.message.content).toBe(REPLIES.openai);
    expect(micros).toBe(0);
    const upstream = fakes.openai.requests.at(-1)!;
    expect([upstream.headers.authorization, (upstream.body as { model: string }).model]).toEqual([`Bearer ${KEYS.openai}`, 'qwen-local']);
  });
});
