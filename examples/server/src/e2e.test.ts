import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { startServer, type RunningServer } from './start-server';

describe('reference server, driven by the openai SDK', () => {
  let dataDir: string;
  let server: RunningServer;
  let client: OpenAI;
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tollgate-e2e-'));
    const config = loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir });
    server = await startServer(config, { log: (line) => logs.push(line) });
    client = new OpenAI({ apiKey: server.demoKey!, baseURL: `${server.url}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates a demo key on first start', () => {
    expect(server.demoKey).toMatch(/^sk_svc_[A-Za-z0-9]{43}$/);
  });

  it('lists the simulator models with only the record fields', async () => {
    const page = await client.models.list();
    const ids = page.data.map((model) => model.id);
    expect(ids).toEqual(['sim-fast', 'sim-pro', 'sim-image', 'sim-search']);
    const fast = page.data[0] as unknown as Record<string, unknown>;
    expect(Object.keys(fast).sort()).toEqual(
      [
        'compact_at_tokens',
        'context_tokens',
        'created',
        'id',
        'input_modalities',
        'label',
        'max_output_tokens',
        'object',
        'owned_by',
        'plan',
        'price',
        'retention',
        'tier',
        'type',
      ].sort(),
    );
    expect(fast.label).toContain('simulator');
  });

  it('answers a chat completion, rewrites id and model, and charges exactly', async () => {
    const before = await server.store.getBalance((await accountOf(server)).id);
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'sim-fast', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.model).toBe('sim-fast');
    expect(completion.choices[0]!.message.role).toBe('assistant');
    expect(typeof completion.choices[0]!.message.content).toBe('string');
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-service-version')).toBe('tollgate/0.1.0');
    const usage = completion.usage!;
    const cost = Math.ceil((usage.prompt_tokens * 150_000 + usage.completion_tokens * 600_000) / 1_000_000);
    const after = await server.store.getBalance((await accountOf(server)).id);
    expect(after.balance).toBe(before.balance - cost);
    expect(after.held).toBe(0);
  });

  it('streams a chat completion that ends with [DONE], with usage when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'sim-fast',
      messages: [{ role: 'user', content: 'Count to five' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usageChunks = 0;
    for await (const chunk of stream) {
      expect(chunk.id).toMatch(/^chatcmpl-/);
      expect(chunk.model).toBe('sim-fast');
      if (chunk.usage) {
        usageChunks++;
        expect(chunk.choices).toEqual([]);
      } else text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usageChunks).toBe(1);
  });

  it('generates images with the SDK', async () => {
    const account = (await accountOf(server)).id;
    const before = await server.store.getBalance(account);
    const { data: result, response } = await client.images.generate({ model: 'sim-image', prompt: 'a lighthouse', n: 2 }).withResponse();
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(result.data).toHaveLength(2);
    const png = Buffer.from(result.data![0]!.b64_json!, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1024, 1024]);
    expect((result.data![0] as unknown as { mime_type: string }).mime_type).toBe('image/png');
    // sim-image: 40,000 micro-dollars an image, two delivered.
    const after = await server.store.getBalance(account);
    expect([after.balance, after.held]).toEqual([before.balance - 80_000, 0]);
  });

  it("draws the simulator's images at the requested aspect ratio and resolution", async () => {
    const sizes: number[][] = [];
    for (const [aspect_ratio, resolution] of [
      ['16:9', '1k'],
      ['2:3', '1k'],
      ['3:4', '2k'],
    ]) {
      // Tollgate's own fields go in the body as extra parameters of the SDK call.
      const params = { model: 'sim-image', prompt: 'a lighthouse', aspect_ratio, resolution } as unknown as OpenAI.ImageGenerateParamsNonStreaming;
      const result = await client.images.generate(params);
      const png = Buffer.from(result.data![0]!.b64_json!, 'base64');
      sizes.push([png.readUInt32BE(16), png.readUInt32BE(20)]);
    }
    expect(sizes).toEqual([
      [1024, 576],
      [680, 1024],
      [1536, 2048],
    ]);
    const refused = await client.images.generate({ model: 'sim-image', prompt: 'a lighthouse', size: '1024x1024' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('invalid_parameter');
  });

  it('never logs a key', () => {
    const text = JSON.stringify(logs);
    expect(text).not.toContain('sk_svc_');
    expect(logs.some((line) => line.msg === 'request' && line.path === '/v1/chat/completions' && line.status === 200)).toBe(true);
  });
});

async function accountOf(server: RunningServer) {
  const { createHash } = await import('node:crypto');
  const found = await server.store.findKey(createHash('sha256').update(server.demoKey!).digest('hex'));
  return found!.account;
}
