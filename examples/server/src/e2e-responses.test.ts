import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { estimateCompletionTokens } from '@tollgate/billing';
import { fakeAnthropic, fakeGemini, fakeOpenAI } from '@tollgate/testing';
import { type Listening, listen } from '@tollgate/testing/server';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { type RunningServer, startServer } from './start-server';

// POST /v1/responses through the reference server: the three client libraries that call it by
// default (openai's client.responses, the AI SDK's openai() provider, LangChain's ChatOpenAI with
// useResponsesApi), then the three provider families behind their wire-accurate fakes. The
// simulator (sim-fast: 150,000 / 600,000 micros per million tokens) counts a token per word and
// replies with 400 words, so a five-word prompt and an output limit of seven cost exactly 5 + 7 tokens.
const PROMPT = 'Say hello in five words';
const PROMPT_TOKENS = 5;
const LIMIT = 7;
const SIM_PRICE = { prompt_micros_per_mtok: 150_000, completion_micros_per_mtok: 600_000 };
type Price = { prompt_micros_per_mtok: number; completion_micros_per_mtok: number };
const costOf = (price: Price, usage: { input_tokens: number; output_tokens: number }) =>
  Math.ceil((usage.input_tokens * price.prompt_micros_per_mtok + usage.output_tokens * price.completion_micros_per_mtok) / 1_000_000);
const COST = costOf(SIM_PRICE, { input_tokens: PROMPT_TOKENS, output_tokens: LIMIT });

const dirs: string[] = [];
const keyHash = (key: string) => createHash('sha256').update(key).digest('hex');

async function start(env: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-responses-'));
  dirs.push(dataDir);
  return startServer(loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir, ...env }), { log: () => undefined });
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `call`, waits for the server to settle, and returns its result with the micros it cost. */
async function charged<T>(server: RunningServer, key: string, call: () => Promise<T>): Promise<{ result: T; micros: number }> {
  const found = await server.store.findKey(keyHash(key));
  if (!found) throw new Error('unknown key');
  const before = await server.store.getBalance(found.account.id);
  const result = await call();
  await server.gateway.idle();
  const after = await server.store.getBalance(found.account.id);
  expect(after.held).toBe(0);
  return { result, micros: before.balance - after.balance };
}

const post = (server: RunningServer, key: string, body: unknown) =>
  fetch(`${server.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('POST /v1/responses: client SDKs against the simulator', () => {
  let server: RunningServer;
  let key: string;
  let accountId: string;
  let balanceBefore: number;

  beforeAll(async () => {
    server = await start();
    // An account of its own on the max plan: the file sends more requests than the demo plan's burst.
    const account = await server.store.createAccount({ plan: 'max' });
    await server.store.addCredits(account.id, 5_000_000, { note: 'e2e' });
    accountId = account.id;
    key = (await server.store.createKey(account.id, 'e2e-responses')).key;
  });

  afterAll(async () => {
    await server?.close();
  });

  beforeEach(async () => {
    balanceBefore = (await server.store.getBalance(accountId)).balance;
  });

  /** The request's one charge: the newest ledger entry, the balance moved by it, nothing held. */
  async function expectCharged(micros = COST): Promise<void> {
    await expect.poll(async () => (await server.store.getBalance(accountId)).held, { timeout: 5_000 }).toBe(0);
    const [newest] = await server.store.entries(accountId, { limit: 1 });
    expect(newest).toMatchObject({ kind: 'charge', micros: -micros });
    expect((await server.store.getBalance(accountId)).balance).toBe(balanceBefore - micros);
  }

  describe('openai (client.responses)', () => {
    const client = () => new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });

    it('create: the response object, exact usage and charge, and the started headers', async () => {
      const { data, response } = await client().responses.create({ model: 'sim-fast', input: PROMPT, max_output_tokens: LIMIT }).withResponse();
      expect(response.status).toBe(200);
      expect(response.headers.get('x-request-id')).toMatch(/^req_[A-Za-z0-9]{24}$/);
      expect(response.headers.get('x-funding')).toBe('credits');
      expect(response.headers.get('x-service-version')).toMatch(/^tollgate\//);
      expect(response.headers.get('x-output-limited')).toBeNull();
      expect(data).toMatchObject({
        object: 'response',
        model: 'sim-fast',
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        max_output_tokens: LIMIT,
        store: false,
        previous_response_id: null,
        usage: { input_tokens: PROMPT_TOKENS, output_tokens: LIMIT, total_tokens: PROMPT_TOKENS + LIMIT, input_tokens_details: { cached_tokens: 0 } },
      });
      expect(data.id).toMatch(/^resp_/);
      expect(data.output).toHaveLength(1);
      expect(data.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'incomplete' });
      expect(data.output_text.match(/\S+/g)).toHaveLength(LIMIT);
      await expectCharged();
    });

    it('stream: the Responses event sequence with typed events, sequence numbers, and usage on response.incomplete', async () => {
      const stream = await client().responses.create({ model: 'sim-fast', input: PROMPT, max_output_tokens: LIMIT, stream: true });
      const events: ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      const types = events.map((event) => event.type);
      expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
      expect(types.filter((type) => type === 'response.output_text.delta')).toHaveLength(LIMIT);
      expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      const last = events.at(-1);
      expect(last?.type === 'response.incomplete' && last.response.usage).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: LIMIT });
      const done = events.find((event) => event.type === 'response.output_text.done');
      const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
      expect(done?.type === 'response.output_text.done' && done.text).toBe(deltas.join(''));
      await expectCharged();
    });

    it('stream: the raw wire has an event: line naming each event and no [DONE]', async () => {
      const response = await post(server, key, { model: 'sim-fast', input: PROMPT, max_output_tokens: LIMIT, stream: true });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
      const text = await response.text();
      const blocks = text.split('\n\n').filter((block) => block !== '' && !block.startsWith(':'));
      for (const block of blocks) {
        const [eventLine, dataLine] = block.split('\n');
        const data = JSON.parse((dataLine ?? '').replace(/^data: /, ''));
        expect(eventLine).toBe(`event: ${data.type}`);
      }
      expect(text).not.toContain('[DONE]');
      await expectCharged();
    });
  });

  describe('Vercel AI SDK (the default openai() provider calls /v1/responses)', () => {
    const model = () => createOpenAI({ baseURL: `${server.url}/v1`, apiKey: key })('sim-fast');

    it('generateText: exact usage and charge', async () => {
      const result = await generateText({ model: model(), prompt: PROMPT, maxOutputTokens: LIMIT, maxRetries: 0 });
      expect(result.text.match(/\S+/g)).toHaveLength(LIMIT);
      expect(result.finishReason).toBe('length');
      expect(result.usage).toMatchObject({ inputTokens: PROMPT_TOKENS, outputTokens: LIMIT, totalTokens: PROMPT_TOKENS + LIMIT });
      await expectCharged();
    });

    it('streamText: exact usage and charge', async () => {
      const result = streamText({ model: model(), prompt: PROMPT, maxOutputTokens: LIMIT, maxRetries: 0 });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect(text.match(/\S+/g)).toHaveLength(LIMIT);
      expect(await result.usage).toMatchObject({ inputTokens: PROMPT_TOKENS, outputTokens: LIMIT, totalTokens: PROMPT_TOKENS + LIMIT });
      await expectCharged();
    });
  });

  describe('LangChain (ChatOpenAI with useResponsesApi)', () => {
    const chat = () =>
      new ChatOpenAI({
        model: 'sim-fast',
        apiKey: key,
        configuration: { baseURL: `${server.url}/v1` },
        maxTokens: LIMIT,
        maxRetries: 0,
        useResponsesApi: true,
      });

    it('invoke: exact usage and charge', async () => {
      const message = await chat().invoke(PROMPT);
      expect(message.text.match(/\S+/g)).toHaveLength(LIMIT);
      expect(message.usage_metadata).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: LIMIT, total_tokens: PROMPT_TOKENS + LIMIT });
      await expectCharged();
    });

    it('stream: exact usage and charge', async () => {
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await chat().stream(PROMPT)) whole = whole === undefined ? chunk : whole.concat(chunk);
      expect(whole?.text.match(/\S+/g)).toHaveLength(LIMIT);
      expect(whole?.usage_metadata).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: LIMIT, total_tokens: PROMPT_TOKENS + LIMIT });
      await expectCharged();
    });
  });

  describe('the same rules and errors as chat', () => {
    it('refuses what it does not serve with 400 invalid_parameter naming the field, before anything starts', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ previous_response_id: 'resp_123' }, 'previous_response_id'],
        [{ tools: [{ type: 'web_search_preview' }] }, 'tools[0].type'],
        [{ background: true }, 'background'],
        [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] }, 'input[0].content[0].type'],
        [{ store: true }, 'store'],
      ];
      for (const [extra, field] of cases) {
        const response = await post(server, key, { model: 'sim-fast', input: PROMPT, ...extra });
        expect(response.status).toBe(400);
        expect(response.headers.get('x-request-id')).toBeNull();
        expect(response.headers.get('x-funding')).toBeNull();
        expect(response.headers.get('x-service-version')).toMatch(/^tollgate\//);
        const body = await response.json();
        expect(body).toEqual({ error: { message: expect.stringContaining(field), type: 'invalid_request_error', param: null, code: 'invalid_parameter' } });
      }
      expect((await server.store.getBalance(accountId)).balance).toBe(balanceBefore);
    });

    it('the catalogue of codes: invalid_api_key, invalid_request_body, invalid_output_limit, model_not_found, remote_media', async () => {
      const codeOf = async (response: Response) => [response.status, (await response.json()).error.code];
      expect(await codeOf(await post(server, 'sk_svc_nope', { model: 'sim-fast', input: PROMPT }))).toEqual([401, 'invalid_api_key']);
      expect(await codeOf(await post(server, key, { model: 'sim-fast' }))).toEqual([400, 'invalid_request_body']);
      expect(await codeOf(await post(server, key, { model: 'sim-fast', input: PROMPT, max_output_tokens: 0 }))).toEqual([400, 'invalid_output_limit']);
      expect(await codeOf(await post(server, key, { model: 'sim-image', input: PROMPT }))).toEqual([404, 'model_not_found']);
      const remote = { model: 'sim-fast', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/cat.png' }] }] };
      expect(await codeOf(await post(server, key, remote))).toEqual([400, 'remote_media']);
    });

    it('plan gating: a plus model refuses a free account with 403 model_requires_plan', async () => {
      const account = await server.store.createAccount({ plan: 'free' });
      await server.store.addCredits(account.id, 1_000_000, { note: 'e2e' });
      const free = (await server.store.createKey(account.id, 'free')).key;
      const response = await post(server, free, { model: 'sim-pro', input: PROMPT });
      expect([response.status, (await response.json()).error]).toEqual([403, expect.objectContaining({ code: 'model_requires_plan', type: 'plan' })]);
    });

    it('lowers the output limit to the balance (X-Output-Limited) and refuses an empty balance with 402', async () => {
      const account = await server.store.createAccount({ plan: 'max' });
      // The minimum hold (100 micros) and no more: the prompt and about 158 output tokens, not 4,000.
      await server.store.addCredits(account.id, 100, { note: 'e2e' });
      const poor = (await server.store.createKey(account.id, 'poor')).key;
      const { result, micros } = await charged(server, poor, async () => {
        const response = await post(server, poor, { model: 'sim-fast', input: PROMPT, max_output_tokens: 4_000 });
        return { status: response.status, limited: response.headers.get('x-output-limited'), body: await response.json() };
      });
      expect([result.status, result.limited]).toEqual([200, 'balance']);
      expect(result.body.max_output_tokens).toBeLessThan(4_000);
      expect(result.body.max_output_tokens).toBeGreaterThan(100);
      expect(result.body.usage.output_tokens).toBe(result.body.max_output_tokens);
      expect(micros).toBe(costOf(SIM_PRICE, result.body.usage));

      const broke = await server.store.createAccount({ plan: 'max' });
      const brokeKey = (await server.store.createKey(broke.id, 'broke')).key;
      const refused = await post(server, brokeKey, { model: 'sim-fast', input: PROMPT });
      expect([refused.status, (await refused.json()).error.code, refused.headers.get('x-request-id')]).toEqual([402, 'insufficient_balance', null]);
    });
  });
});

// The provider families: each fake on a loopback port behind the real adapter, through a catalogue file.
const KEYS = { anthropic: 'sk-ant-e2e-r1', gemini: 'AIza-e2e-r2', openai: 'sk-compat-e2e-r3' };
const REPLIES = {
  anthropic: 'Hello from the fake Claude, over Responses.',
  gemini: 'Hello from the fake Gemini, over Responses.',
  openai: 'Hello from the fake compatible server, over Responses.',
};
const TOOL_CALLS = [{ name: 'get_weather', arguments: '{"city":"Paris"}' }];
const WEATHER: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
const PRICES = {
  claude: { prompt_micros_per_mtok: 3_000_000, completion_micros_per_mtok: 15_000_000 },
  gemini: { prompt_micros_per_mtok: 300_000, completion_micros_per_mtok: 2_500_000 },
  compat: { prompt_micros_per_mtok: 200_000, completion_micros_per_mtok: 800_000 },
};
const chatModel = (id: keyof typeof PRICES, provider: string, upstream: string) => ({
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
  price: { ...PRICES[id], min_hold_micros: 100 },
});

describe('POST /v1/responses: every provider family', () => {
  const fakes = {
    anthropic: fakeAnthropic({ apiKey: KEYS.anthropic, reply: REPLIES.anthropic, toolCalls: TOOL_CALLS, cacheReadTokens: 3 }),
    gemini: fakeGemini({ apiKey: KEYS.gemini, reply: REPLIES.gemini, toolCalls: TOOL_CALLS, thinking: 'I think about the weather first.' }),
    openai: fakeOpenAI({ apiKey: KEYS.openai, reply: REPLIES.openai, toolCalls: TOOL_CALLS, cachedTokens: 2 }),
  };
  const listeners: Partial<Record<keyof typeof fakes, Listening>> = {};
  let server: RunningServer;
  let key: string;
  let client: OpenAI;

  beforeAll(async () => {
    for (const family of ['anthropic', 'gemini', 'openai'] as const) listeners[family] = await listen(fakes[family].handle);
    process.env.E2E_R_ANTHROPIC_KEY = KEYS.anthropic;
    process.env.E2E_R_GEMINI_KEY = KEYS.gemini;
    process.env.E2E_R_COMPAT_KEY = KEYS.openai;
    const catalogue = {
      providers: {
        claude: { kind: 'anthropic', baseURL: `${listeners.anthropic?.url}/v1`, apiKeyEnv: 'E2E_R_ANTHROPIC_KEY' },
        google: { kind: 'gemini', baseURL: `${listeners.gemini?.url}/v1beta`, apiKeyEnv: 'E2E_R_GEMINI_KEY' },
        local: { kind: 'openai-compatible', baseURL: `${listeners.openai?.url}/v1`, apiKeyEnv: 'E2E_R_COMPAT_KEY' },
      },
      models: [
        chatModel('claude', 'claude', 'claude-sonnet-4-5'),
        chatModel('gemini', 'google', 'gemini-2.5-flash'),
        chatModel('compat', 'local', 'qwen2.5-7b-instruct'),
      ],
    };
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-responses-catalogue-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'catalogue.json'), JSON.stringify(catalogue));
    server = await start({ TOLLGATE_CATALOGUE: join(dir, 'catalogue.json') });
    const account = await server.store.createAccount({ plan: 'max' });
    await server.store.addCredits(account.id, 50_000_000, { note: 'e2e' });
    key = (await server.store.createKey(account.id, 'e2e-families')).key;
    client = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all(Object.values(listeners).map((listener) => listener.close()));
    delete process.env.E2E_R_ANTHROPIC_KEY;
    delete process.env.E2E_R_GEMINI_KEY;
    delete process.env.E2E_R_COMPAT_KEY;
  });

  const FAMILIES = [
    { family: 'anthropic', model: 'claude' },
    { family: 'gemini', model: 'gemini' },
    { family: 'openai', model: 'compat' },
  ] as const;

  describe.each(FAMILIES)('$family ($model)', ({ family, model }) => {
    const reply = REPLIES[family];
    const lastBody = () => fakes[family].requests.at(-1)?.body as Record<string, any>;

    it('answers with a message item and usage (cached and reasoning tokens as the family reports them), charged exactly', async () => {
      const { result, micros } = await charged(server, key, () =>
        client.responses.create({
          model,
          instructions: 'Be brief.',
          input: 'Say hello to the gateway tests please',
          ...(family === 'gemini' ? { reasoning: { effort: 'low' as const } } : {}),
        }),
      );
      expect(result).toMatchObject({ model, status: 'completed', instructions: 'Be brief.' });
      expect(result.output_text).toBe(reply);
      const usage = result.usage;
      if (!usage) throw new Error('no usage');
      expect(usage.output_tokens).toBe(reply.split(' ').length + (family === 'gemini' ? 6 : 0));
      expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
      if (family === 'anthropic') expect(usage.input_tokens_details.cached_tokens).toBe(3);
      if (family === 'openai') expect(usage.input_tokens_details.cached_tokens).toBe(2);
      if (family === 'gemini') expect(usage.output_tokens_details.reasoning_tokens).toBe(6);
      expect(micros).toBe(costOf(PRICES[model], usage));
    });

    it('function tools: a function_call item, then its output sent back as function_call_output', async () => {
      const ask = 'What is the weather in Paris?';
      const first = await charged(server, key, () => client.responses.create({ model, input: ask, tools: [WEATHER] }));
      const call = first.result.output.find((item) => item.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('no function call');
      expect([call.name, JSON.parse(call.arguments), call.status]).toEqual(['get_weather', { city: 'Paris' }, 'completed']);
      expect(call.call_id).toMatch(/\S/);
      expect(call.id).toMatch(/^fc_/);
      expect(first.micros).toBe(costOf(PRICES[model], first.result.usage ?? { input_tokens: 0, output_tokens: 0 }));

      const input: ResponseInputItem[] = [
        { role: 'user', content: ask },
        { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":18}' },
      ];
      const second = await charged(server, key, () => client.responses.create({ model, input, tools: [WEATHER] }));
      expect(second.result.output_text).toBe(reply);
      expect(second.micros).toBe(costOf(PRICES[model], second.result.usage ?? { input_tokens: 0, output_tokens: 0 }));
      const body = lastBody();
      if (family === 'anthropic') expect(body.messages[2]).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id }] });
      if (family === 'gemini') expect(body.contents[2].parts[0]).toEqual({ functionResponse: { name: 'get_weather', response: { temp_c: 18 } } });
      if (family === 'openai') expect(body.messages[2]).toEqual({ role: 'tool', tool_call_id: call.call_id, content: '{"temp_c":18}' });
    });

    it('streams a function call: its argument deltas assemble to the arguments of function_call_arguments.done', async () => {
      const stream = await client.responses.create({ model, input: 'Weather in Paris?', tools: [WEATHER], stream: true });
      let args = '';
      let done: string | undefined;
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        if (event.type === 'response.function_call_arguments.delta') args += event.delta;
        if (event.type === 'response.function_call_arguments.done') done = event.arguments;
        if (event.type === 'response.completed') completed = event.response;
      }
      expect(JSON.parse(args)).toEqual({ city: 'Paris' });
      expect(done).toBe(args);
      expect(completed?.output.at(-1)).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: args, status: 'completed' });
      expect(completed?.usage?.output_tokens).toBeGreaterThan(0);
      await server.gateway.idle();
    });
  });

  it('text.format and temperature reach the model in its own form', async () => {
    const format = { type: 'json_schema' as const, name: 'greeting', schema: { type: 'object', properties: { text: { type: 'string' } } }, strict: false };
    await client.responses.create({ model: 'compat', input: 'Greet', temperature: 0.3, text: { format } });
    expect(fakes.openai.requests.at(-1)?.body).toMatchObject({
      temperature: 0.3,
      response_format: { type: 'json_schema', json_schema: { name: 'greeting', schema: format.schema, strict: false } },
    });
    await client.responses.create({ model: 'gemini', input: 'Greet', temperature: 0.3, text: { format } });
    expect(fakes.gemini.requests.at(-1)?.body.generationConfig).toMatchObject({
      temperature: 0.3,
      responseMimeType: 'application/json',
      responseJsonSchema: format.schema,
    });
    await server.gateway.idle();
  });

  it('a structured output on an Anthropic model is refused before anything is sent, and costs nothing', async () => {
    const sent = fakes.anthropic.requests.length;
    const format = { type: 'json_schema', name: 'greeting', schema: { type: 'object' } };
    const { result, micros } = await charged(server, key, async () => {
      const response = await post(server, key, { model: 'claude', input: 'Greet', text: { format } });
      return { status: response.status, requestId: response.headers.get('x-request-id'), body: await response.json() };
    });
    expect(result).toMatchObject({ status: 400, requestId: expect.stringMatching(/^req_/), body: { error: { code: 'invalid_request' } } });
    expect(fakes.anthropic.requests).toHaveLength(sent);
    expect(micros).toBe(0);
  });

  it('an upstream that fails mid-stream ends with response.failed; the account pays what was delivered', async () => {
    // An error event after four chunks: the upstream fails once the stream has started.
    fakes.openai.setFaults([{ kind: 'error-event', afterChunks: 4 }]);
    const { result, micros } = await charged(server, key, async () => {
      const response = await post(server, key, { model: 'compat', input: 'Say hello please', stream: true });
      expect(response.status).toBe(200);
      return response.text();
    });
    fakes.openai.setFaults([]);
    const events = result
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) => JSON.parse(block.split('\n')[1]?.replace(/^data: /, '') ?? 'null'));
    const last = events.at(-1);
    expect(last).toMatchObject({ type: 'response.failed', response: { status: 'failed', error: { code: 'upstream_error' } } });
    const delivered = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    expect(delivered.length).toBeGreaterThan(0);
    expect(last.response.usage.output_tokens).toBe(estimateCompletionTokens(delivered));
    expect(micros).toBe(costOf(PRICES.compat, last.response.usage));
  });
});
