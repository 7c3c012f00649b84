import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { memoryStore, type Store } from '@tollgate/billing';
import { Hono } from 'hono';
import { mount } from 'hono/mount';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { demoGateway } from './gateway';

// The gateway under /api, the ways docs/embedding.md shows: a host that strips the prefix before
// the gateway sees the path (Hono's mount, an Express-style mount), and one that passes the whole
// path, which needs the gateway's basePath (Hono's route, a node:http listener, a plain handler).

const CHAT = { model: 'fast', messages: [{ role: 'user' as const, content: 'Say hello' }] };
// gateway.ts's fake upstream counts a token per word: 'Say hello' is 2, the reply 8.
const COST = Math.ceil((2 * 150_000 + 8 * 600_000) / 1_000_000);
const REPLY = 'Hello from the fake upstream, served by Tollgate.';

function post(url: string, key: string): Request {
  return new Request(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(CHAT) });
}

/** The gateway's plain-text 404, not the host's. */
async function expectGatewayNotFound(response: Response): Promise<void> {
  expect(response.status).toBe(404);
  expect(response.headers.get('x-service-version')).toBe('embed-example/1.0.0');
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
}

/** A chat through `fetch` at `url`: the reply, and its charge on the store. */
async function expectChat(
  fetch: (request: Request) => Response | Promise<Response>,
  url: string,
  { demoKey: key, accountId }: { demoKey: string; accountId: string },
  store: Store,
) {
  const response = await fetch(post(url, key));
  expect(response.status).toBe(200);
  const body = (await response.json()) as { choices: { message: { content: string } }[]; usage: { prompt_tokens: number; completion_tokens: number } };
  expect(body.choices[0]!.message.content).toBe(REPLY);
  expect(body.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 8 });
  expect(await store.getBalance(accountId)).toEqual({ balance: 5_000_000 - COST, held: 0, available: 5_000_000 - COST });
}

describe('the gateway under a base path', () => {
  it("Hono mount(): the prefix is stripped, so no basePath; the gateway's 404 below it, Hono's elsewhere", async () => {
    const store = memoryStore();
    const demo = await demoGateway(store);
    const { gateway, demoKey } = demo;
    const app = new Hono();
    app.get('/', (c) => c.text('my app'));
    app.all('/api/*', mount(gateway.fetch));

    await expectChat(app.request, 'http://app.test/api/v1/chat/completions', demo, store);
    const models = await app.request('http://app.test/api/v1/models', { headers: { authorization: `Bearer ${demoKey}` } });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: { id: string }[] }).data.map((model) => model.id)).toEqual(['fast']);
    await expectGatewayNotFound(await app.request('http://app.test/api/elsewhere'));
    expect(await (await app.request('http://app.test/')).text()).toBe('my app');
    const outside = await app.request('http://app.test/v1/models');
    expect(outside.status).toBe(404);
    expect(outside.headers.get('x-service-version')).toBeNull();
  });

  it('Hono route(): the whole path reaches the gateway, so basePath says where the API is', async () => {
    const store = memoryStore();
    const demo = await demoGateway(store, { basePath: '/api' });
    const { gateway } = demo;
    const api = new Hono();
    api.all('/*', (c) => gateway.fetch(c.req.raw));
    const app = new Hono();
    app.route('/api', api);

    await expectChat(app.request, 'http://app.test/api/v1/chat/completions', demo, store);
    await expectGatewayNotFound(await app.request('http://app.test/api/elsewhere'));

    // The same app without basePath: the gateway sees /api/v1/... and serves none of it.
    const unaware = await demoGateway(memoryStore());
    const wrong = new Hono();
    wrong.route(
      '/api',
      new Hono().all('/*', (c) => unaware.gateway.fetch(c.req.raw)),
    );
    await expectGatewayNotFound(await wrong.request(post('http://app.test/api/v1/chat/completions', unaware.demoKey)));
  });

  it('a node:http (req, res) listener with basePath, driven by the openai SDK, stream included', async () => {
    const store = memoryStore();
    const demo = await demoGateway(store, { basePath: '/api' });
    const { gateway, demoKey } = demo;
    const server = createServer(getRequestListener(gateway.fetch));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new OpenAI({ apiKey: demoKey, baseURL: `${origin}/api/v1`, maxRetries: 0 });
      expect((await client.models.list()).data.map((model) => model.id)).toEqual(['fast']);
      const stream = await client.chat.completions.create({ ...CHAT, stream: true, stream_options: { include_usage: true } });
      let text = '';
      const usages: unknown[] = [];
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usages.push(chunk.usage);
      }
      expect(text).toBe(REPLY);
      expect(usages).toEqual([expect.objectContaining({ prompt_tokens: 2, completion_tokens: 8 })]);
      await expectGatewayNotFound(await fetch(`${origin}/v1/models`));
      await expectGatewayNotFound(await fetch(`${origin}/apiv1/models`));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('an Express-style mount that strips the prefix from req.url (as app.use("/api", …) does): no basePath', async () => {
    const store = memoryStore();
    const demo = await demoGateway(store);
    const { gateway } = demo;
    const listener = getRequestListener(gateway.fetch);
    // What Express's app.use('/api', listener) does to the request before calling the listener.
    const server = createServer((req, res) => {
      if (req.url?.startsWith('/api/')) {
        req.url = req.url.slice('/api'.length);
        return void listener(req, res);
      }
      res.writeHead(404).end('app 404');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await expectChat(fetch, `${origin}/api/v1/chat/completions`, demo, store);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a plain fetch handler with basePath: only paths under it, at a segment boundary, are the API', async () => {
    const store = memoryStore();
    const demo = await demoGateway(store, { basePath: '/api/' });
    const { gateway, demoKey } = demo;
    await expectChat(gateway.fetch, 'http://gateway.test/api/v1/chat/completions', demo, store);
    for (const path of ['/v1/models', '/api', '/api/', '/apiv1/models', '/api/api/v1/models', '/other/v1/models']) {
      await expectGatewayNotFound(await gateway.fetch(new Request(`http://gateway.test${path}`, { headers: { authorization: `Bearer ${demoKey}` } })));
    }
  });
});
