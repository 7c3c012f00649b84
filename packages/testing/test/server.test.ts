import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeOpenAI } from '../src/openai/index';
import { listen, type Listening } from './server';

let server: Listening | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Waits until `check()` holds, for up to 5 s of real time (a try count runs out sooner on a busy machine). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('listen', () => {
  it('serves a handler on a free loopback port, echoing method, path, headers and body', async () => {
    server = await listen(async (request) =>
      Response.json(
        { method: request.method, path: new URL(request.url).pathname, header: request.headers.get('x-test'), body: await request.text() },
        { headers: { 'x-reply': 'yes' } },
      ),
    );
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const response = await fetch(`${server.url}/a/b?c=1`, { method: 'POST', headers: { 'x-test': 'hi' }, body: 'payload' });
    expect(response.headers.get('x-reply')).toBe('yes');
    expect(await response.json()).toEqual({ method: 'POST', path: '/a/b', header: 'hi', body: 'payload' });
  });

  it('serves the fake to the openai SDK over HTTP, streamed', async () => {
    const upstream = fakeOpenAI({ reply: 'over the wire' });
    server = await listen(upstream.handle);
    const client = new OpenAI({ apiKey: 'k', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('over the wire');
    await until(() => upstream.open === 0);
    expect(upstream.open).toBe(0);
  });

  it("cancels the handler's stream when the client disconnects", async () => {
    const upstream = fakeOpenAI({ faults: [{ kind: 'stall', afterChunks: 1 }] });
    server = await listen(upstream.handle);
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [], stream: true }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    expect(upstream.open).toBe(1);
    controller.abort();
    await until(() => upstream.open === 0);
    expect(upstream.open).toBe(0);
  });

  it('drops the connection when the body errors (cut fault)', async () => {
    const upstream = fakeOpenAI({ faults: [{ kind: 'cut', afterChunks: 2 }] });
    server = await listen(upstream.handle);
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [], stream: true }) });
    expect(response.status).toBe(200);
    const error = await response.text().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('terminated');
  });

  it('close() ends open streams', async () => {
    const upstream = fakeOpenAI({ faults: [{ kind: 'stall', afterChunks: 1 }] });
    server = await listen(upstream.handle);
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [], stream: true }) });
    const reader = response.body!.getReader();
    await reader.read();
    await server.close();
    server = undefined;
    await expect(reader.read()).rejects.toThrow('terminated');
    await until(() => upstream.open === 0);
    expect(upstream.open).toBe(0);
  });
});
