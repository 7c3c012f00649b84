import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import type { AIMessageChunk } from '@langchain/core/messages';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { startServer, type RunningServer } from './start-server';

// The three client libraries apps use most, each against the reference server's simulator model
// (sim-fast: 150,000 / 600,000 micros per million tokens). The simulator counts a token per word
// and replies with 400 words, so a prompt of five words and an output limit of seven give exactly
// 5 + 7 tokens: usage and charge are known before the request is sent.
const PROMPT = 'Say hello in five words';
const PROMPT_TOKENS = 5;
const LIMIT = 7;
const COST = Math.ceil((PROMPT_TOKENS * 150_000 + LIMIT * 600_000) / 1_000_000);

describe('client SDKs against the reference server', () => {
  let dataDir: string;
  let server: RunningServer;
  let baseURL: string;
  let key: string;
  let accountId: string;
  let balanceBefore: number;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-sdks-'));
    server = await startServer(loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir }), { log: () => {} });
    baseURL = `${server.url}/v1`;
    key = server.demoKey!;
    accountId = (await server.store.findKey(createHash('sha256').update(key).digest('hex')))!.account.id;
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    balanceBefore = (await server.store.getBalance(accountId)).balance;
  });

  /** The request's one charge: the newest ledger entry, the balance moved by it, nothing held. */
  async function expectCharged(): Promise<void> {
    // A stream settles when its last byte is written, which may be just after the client read it.
    await expect.poll(async () => (await server.store.getBalance(accountId)).held, { timeout: 5_000 }).toBe(0);
    const [newest] = await server.store.entries(accountId, { limit: 1 });
    expect(newest).toMatchObject({ kind: 'charge', micros: -COST });
    expect((await server.store.getBalance(accountId)).balance).toBe(balanceBefore - COST);
  }

  describe('openai', () => {
    const client = () => new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });

    it('lists the models', async () => {
      const page = await client().models.list();
      expect(page.data.map((model) => model.id)).toContain('sim-fast');
    });

    it('chat: exact usage and charge', async () => {
      const completion = await client().chat.completions.create({ model: 'sim-fast', max_tokens: LIMIT, messages: [{ role: 'user', content: PROMPT }] });
      expect(completion.usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: LIMIT, total_tokens: PROMPT_TOKENS + LIMIT });
      expect(completion.choices[0]!.finish_reason).toBe('length');
      await expectCharged();
    });

    it('stream with include_usage: exact usage and charge', async () => {
      const stream = await client().chat.completions.create({
        model: 'sim-fast',
        max_tokens: LIMIT,
        messages: [{ role: 'user', content: PROMPT }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      const usages: unknown[] = [];
      for await (const chunk of stream) {
        if (chunk.usage) usages.push(chunk.usage);
        text += chunk.choices[0]?.delta.content ?? '';
      }
      expect(text.match(/\S+/g)).toHaveLength(LIMIT);
      expect(usages).toEqual([expect.objectContaining({ prompt_tokens: PROMPT_TOKENS, completion_tokens: LIMIT })]);
      await expectCharged();
    });
  });

  describe('Vercel AI SDK (ai + @ai-sdk/openai-compatible)', () => {
    const model = () => createOpenAICompatible({ name: 'tollgate', baseURL, apiKey: key, includeUsage: true }).chatModel('sim-fast');

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

  describe('LangChain (@langchain/openai)', () => {
    const chat = () => new ChatOpenAI({ model: 'sim-fast', apiKey: key, configuration: { baseURL }, maxTokens: LIMIT, maxRetries: 0, streamUsage: true });

    it('invoke: exact usage and charge', async () => {
      const message = await chat().invoke(PROMPT);
      expect(String(message.content).match(/\S+/g)).toHaveLength(LIMIT);
      expect(message.usage_metadata).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: LIMIT, total_tokens: PROMPT_TOKENS + LIMIT });
      await expectCharged();
    });

    it('stream: exact usage and charge', async () => {
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await chat().stream(PROMPT)) whole = whole === undefined ? chunk : whole.concat(chunk);
      expect(String(whole!.content).match(/\S+/g)).toHaveLength(LIMIT);
      expect(whole!.usage_metadata).toMatchObject({ input_tokens: PROMPT_TOKENS, output_tokens: LIMIT, total_tokens: PROMPT_TOKENS + LIMIT });
      await expectCharged();
    });
  });
});
