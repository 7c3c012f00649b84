import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '@tollgate/testing/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from './config';
import { createMetrics } from './metrics';
import { startServer, type RunningServer } from './start-server';
import { tempDataDirs } from './test-data-dir';

const dataDir = tempDataDirs('admin');

const running: RunningServer[] = [];

afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

async function start(env: Record<string, string>, logs: Record<string, unknown>[] = []): Promise<RunningServer> {
  const server = await startServer(loadConfig({ PORT: '0', TOLLGATE_DATA_DIR: dataDir(), ...env }), { log: (line) => logs.push(line) });
  running.push(server);
  return server;
}

async function accountOf(server: RunningServer): Promise<string> {
  const found = await server.store.findKey(createHash('sha256').update(server.demoKey!).digest('hex'));
  return found!.account.id;
}

/** Streams and their settlement finish after the client saw [DONE]: wait until nothing is in flight. */
async function settled(server: RunningServer): Promise<void> {
  await expect.poll(() => server.gateway.active, { timeout: 5_000, interval: 2 }).toBe(0);
}

const chat = (server: RunningServer, body: Record<string, unknown>, key = server.demoKey!) =>
  fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }], ...body }),
  });

describe('TOLLGATE_KEY_CACHE_MS', () => {
  /** Revokes the demo key on the store itself, as the CLI (another process) does: the server's admin path is not told. */
  const revokeBehindTheServer = async (server: RunningServer) => {
    const found = await server.store.findKey(createHash('sha256').update(server.demoKey!).digest('hex'));
    await server.store.revokeKey(found!.id);
  };
  const ask = (server: RunningServer) => chat(server, { model: 'sim-fast', max_tokens: 5 });

  it('0: a key revoked behind the server stops at the very next request', async () => {
    const server = await start({ TOLLGATE_KEY_CACHE_MS: '0' });
    expect((await ask(server)).status).toBe(200);
    await revokeBehindTheServer(server);
    expect((await ask(server)).status).toBe(401);
  });

  it('a key revoked behind the server stops within the setting, not at once', async () => {
    const server = await start({ TOLLGATE_KEY_CACHE_MS: '300' });
    expect((await ask(server)).status).toBe(200);
    await revokeBehindTheServer(server);
    expect((await ask(server)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 350));
    const refused = await ask(server);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
  });
});

describe('admin port', () => {
  it('serves /health with the version, requests in flight and the simulator flag', async () => {
    const server = await start({ ADMIN_PORT: String(await freePort()) });
    expect(new URL(server.adminUrl!).port).not.toBe(String(server.port));
    const health = await fetch(`${server.adminUrl}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', version: 'tollgate/0.1.0', active: 0, simulator: true });
    const stream = await chat(server, { model: 'sim-fast', stream: true, max_tokens: 50 });
    const reader = stream.body!.getReader();
    await reader.read();
    expect(await (await fetch(`${server.adminUrl}/health`)).json()).toEqual({ status: 'ok', version: 'tollgate/0.1.0', active: 1, simulator: true });
    await reader.cancel();
  });

  it('answers /health 503 while the store does not answer, naming it: a load balancer takes the instance out', async () => {
    const server = await start({ ADMIN_PORT: String(await freePort()) });
    expect((await fetch(`${server.adminUrl}/health`)).status).toBe(200);
    await server.store.close?.();
    const health = await fetch(`${server.adminUrl}/health`);
    expect([health.status, await health.json()]).toEqual([
      503,
      { status: 'unavailable', version: 'tollgate/0.1.0', active: 0, simulator: true, down: ['store'] },
    ]);
  });

  it('counts requests by path, status and code, charges as the ledger does, and keeps the histogram consistent', async () => {
    const server = await start({ ADMIN_PORT: String(await freePort()) });
    const account = await accountOf(server);
    const before = await server.store.getBalance(account);
    const ok = await chat(server, { model: 'sim-fast', max_tokens: 20 });
    expect(ok.status).toBe(200);
    const unauthorized = await fetch(`${server.url}/v1/models`, { headers: { authorization: 'Bearer sk_svc_wrong' } });
    expect(unauthorized.status).toBe(401);
    const metrics = await fetch(`${server.adminUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4');
    const text = await metrics.text();
    const requestLines = text.split('\n').filter((line) => line.startsWith('tollgate_requests_total{'));
    expect(requestLines).toEqual([
      'tollgate_requests_total{path="/v1/chat/completions",status="200",code=""} 1',
      'tollgate_requests_total{path="/v1/models",status="401",code="invalid_api_key"} 1',
    ]);
    const charged = 5_000_000 - (await server.store.getBalance(account)).balance;
    expect(before.balance).toBe(5_000_000);
    expect(charged).toBeGreaterThan(0);
    expect(value(text, 'tollgate_charged_micros_total')).toBe(charged);

    // More traffic: a stream, an image, a refused model, unknown paths.
    const stream = await chat(server, { model: 'sim-fast', stream: true, max_tokens: 10 });
    expect((await stream.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
    const image = await fetch(`${server.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-image', prompt: 'a lighthouse' }),
    });
    expect(image.status).toBe(200);
    expect((await chat(server, { model: 'no-such-model' })).status).toBe(404);
    for (const path of ['/wp-admin', '/a/b/c', '/v1/nope']) expect((await fetch(`${server.url}${path}`)).status).toBe(404);
    await settled(server);

    const after = await (await fetch(`${server.adminUrl}/metrics`)).text();
    const entries = await server.store.entries(account, { limit: 1000 });
    const ledgerCharged = -entries.filter((entry) => entry.micros < 0).reduce((sum, entry) => sum + entry.micros, 0);
    expect(ledgerCharged).toBe(5_000_000 - (await server.store.getBalance(account)).balance);
    expect(value(after, 'tollgate_charged_micros_total')).toBe(ledgerCharged);
    const lines = after.split('\n').filter((line) => line.startsWith('tollgate_requests_total{'));
    expect(lines).toContain('tollgate_requests_total{path="/v1/chat/completions",status="200",code=""} 2');
    expect(lines).toContain('tollgate_requests_total{path="/v1/images/generations",status="200",code=""} 1');
    expect(lines).toContain('tollgate_requests_total{path="/v1/chat/completions",status="404",code="model_not_found"} 1');
    // Paths the gateway does not serve share one series.
    expect(lines).toContain('tollgate_requests_total{path="other",status="404",code=""} 3');
    const total = lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    expect(total).toBe(8);

    const buckets = after.split('\n').filter((line) => line.startsWith('tollgate_request_duration_seconds_bucket{'));
    expect(buckets.at(-1)).toBe(`tollgate_request_duration_seconds_bucket{le="+Inf"} ${total}`);
    const counts = buckets.map((line) => Number(line.split(' ').at(-1)));
    for (let index = 1; index < counts.length; index++) expect(counts[index]).toBeGreaterThanOrEqual(counts[index - 1]!);
    const bounds = buckets.slice(0, -1).map((line) => Number(/le="([^"]+)"/.exec(line)![1]));
    expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
    expect(value(after, 'tollgate_request_duration_seconds_count')).toBe(total);
    expect(value(after, 'tollgate_active_requests')).toBe(0);
  });

  it('is not the API: no /metrics on the API port, no API on the admin port', async () => {
    const server = await start({ ADMIN_PORT: String(await freePort()) });
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(404);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await metrics.text()).toBe('Not Found');
    expect((await fetch(`${server.url}/health`)).status).toBe(404);
    const models = await fetch(`${server.adminUrl}/v1/models`, { headers: { authorization: `Bearer ${server.demoKey}` } });
    expect(models.status).toBe(404);
  });

  it('ADMIN_PORT=0 turns it off', async () => {
    const listening = () => process.getActiveResourcesInfo().filter((name) => name === 'TCPServerWrap').length;
    // Servers the last test closed are gone within two loop turns (their handles close at a turn's end).
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    const before = listening();
    const logs: Record<string, unknown>[] = [];
    const server = await start({ ADMIN_PORT: '0' }, logs);
    expect(server.adminUrl).toBeUndefined();
    // A closed server's handle goes a turn or two of the event loop after close(): wait for the
    // count rather than a fixed time a busy machine may not give.
    await expect.poll(listening, { timeout: 5_000, interval: 2 }).toBe(before + 1);
    expect(logs.find((line) => line.msg === 'listening')!.admin).toBeUndefined();
  });
});

describe('metrics rendering', () => {
  it('escapes label values and adds no series per unknown path', () => {
    const metrics = createMetrics();
    metrics.record({ method: 'GET', path: '/x', status: 404, latencyMs: 1 });
    metrics.record({ method: 'GET', path: '/y', status: 404, latencyMs: 1 });
    metrics.record({ method: 'POST', path: '/v1/chat/completions', status: 400, code: 'a"b\\c\nd', latencyMs: 20 });
    const lines = metrics
      .render(0)
      .split('\n')
      .filter((line) => line.startsWith('tollgate_requests_total{'));
    expect(lines).toEqual([
      'tollgate_requests_total{path="other",status="404",code=""} 2',
      'tollgate_requests_total{path="/v1/chat/completions",status="400",code="a\\"b\\\\c\\nd"} 1',
    ]);
  });
});

/** The value of an unlabelled sample. */
function value(text: string, name: string): number {
  const line = text.split('\n').find((each) => each.startsWith(`${name} `));
  return Number(line!.slice(name.length + 1));
}

// ---------------------------------------------------------------------------------------------

const UPSTREAM_KEY = 'sk-upstream-7Qz1VvLq0cZ8secretUPSTREAM';
const UPSTREAM_BODY = 'UPSTREAM-ERROR-BODY-c0ffee-do-not-log';

/**
 * An OpenAI-compatible upstream on 127.0.0.1 that answers by the prompt: `ok` replies, `fail500`
 * and `fail401` fail with a distinctive body (the 401 echoes the credential, as OpenAI's does),
 * `failmid` streams two words and then an error event with the distinctive body.
 */
async function failingUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (data) => (raw += data));
    request.on('end', () => {
      const body = JSON.parse(raw) as { stream?: boolean; messages: { content: string }[] };
      const prompt = body.messages.at(-1)!.content;
      const error = (status: number, message: string) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message, type: 'server_error', code: null } }));
      };
      if (prompt === 'fail500') return error(500, `${UPSTREAM_BODY}: internal failure`);
      if (prompt === 'fail401') return error(401, `Incorrect API key provided: ${request.headers.authorization}. ${UPSTREAM_BODY}`);
      const usage = { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 };
      if (!body.stream) {
        response.writeHead(200, { 'content-type': 'application/json' });
        return response.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            created: 1,
            model: 'up',
            choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
            usage,
          }),
        );
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
        response.write(
          `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`,
        );
      chunk({ role: 'assistant', content: 'Hi' });
      chunk({ content: ' there' });
      if (prompt === 'failmid') {
        response.end(`data: ${JSON.stringify({ error: { message: UPSTREAM_BODY, type: 'server_error' } })}\n\n`);
        return;
      }
      response.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [], usage })}\n\n`);
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('logs', () => {
  it('one JSON line per request with id, account, model, tokens, cost, latency; never a key, the upstream credential or an upstream body', async () => {
    const upstream = await failingUpstream();
    const dir = dataDir();
    const catalogue = join(dir, 'catalogue.json');
    writeFileSync(
      catalogue,
      JSON.stringify({
        providers: { up: { kind: 'openai-compatible', baseURL: `${upstream.url}/v1`, apiKeyEnv: 'TOLLGATE_TEST_UPSTREAM_KEY' } },
        models: [
          {
            id: 'up-chat',
            type: 'chat',
            provider: 'up',
            upstream: 'up',
            input_modalities: ['text'],
            context_tokens: 8_000,
            max_output_tokens: 100,
            price: { prompt_micros_per_mtok: 1_000_000, completion_micros_per_mtok: 2_000_000, min_hold_micros: 100 },
          },
        ],
      }),
    );
    process.env.TOLLGATE_TEST_UPSTREAM_KEY = UPSTREAM_KEY;
    // Everything the process prints while it serves, not only the log function: no secret anywhere.
    const printed: string[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((name) =>
      vi.spyOn(console, name).mockImplementation((...args: unknown[]) => void printed.push(args.map(String).join(' '))),
    );
    const logs: Record<string, unknown>[] = [];
    try {
      const server = await start({ ADMIN_PORT: '0', TOLLGATE_CATALOGUE: catalogue, TOLLGATE_DATA_DIR: dir }, logs);
      const account = await accountOf(server);
      const ok = await chat(server, { model: 'up-chat', messages: [{ role: 'user', content: 'ok' }] });
      expect(ok.status).toBe(200);
      const answers: string[] = [];
      for (const content of ['fail500', 'fail401']) {
        for (const stream of [false, true]) {
          const failed = await chat(server, { model: 'up-chat', stream, messages: [{ role: 'user', content }] });
          expect(failed.status).toBe(502);
          answers.push(await failed.text());
        }
      }
      const mid = await chat(server, { model: 'up-chat', stream: true, messages: [{ role: 'user', content: 'failmid' }] });
      expect(mid.status).toBe(200);
      answers.push(await mid.text());
      const wrongKey = `sk_svc_${'A'.repeat(43)}`;
      expect((await chat(server, { model: 'up-chat' }, wrongKey)).status).toBe(401);
      await settled(server);
      await server.close();
      running.splice(running.indexOf(server), 1);

      const requests = logs.filter((line) => line.msg === 'request');
      expect(requests).toHaveLength(7);
      // Every line is one JSON object (as written to stdout).
      for (const line of logs) expect(JSON.parse(JSON.stringify(line))).toEqual(line);
      const first = requests[0]!;
      expect(first).toMatchObject({
        level: 'info',
        method: 'POST',
        path: '/v1/chat/completions',
        status: 200,
        accountId: account,
        model: 'up-chat',
        provider: 'up',
        promptTokens: 7,
        completionTokens: 2,
        costMicros: 11,
      });
      expect(first.requestId).toMatch(/^req_/);
      expect(typeof first.latencyMs).toBe('number');
      expect(requests.slice(1, 5).map((line) => [line.status, line.code, line.level])).toEqual(Array(4).fill([502, 'upstream_error', 'error']));
      expect(requests[6]).toMatchObject({ status: 401, code: 'invalid_api_key' });
      for (const line of requests.slice(1, 6)) expect(line).toMatchObject({ accountId: account, model: 'up-chat' });

      const everything = [...logs.map((line) => JSON.stringify(line)), ...printed, ...answers].join('\n');
      expect(everything).not.toContain('sk_svc_');
      expect(everything).not.toContain(server.demoKey!);
      expect(everything).not.toContain(UPSTREAM_KEY);
      expect(everything).not.toContain(UPSTREAM_BODY);
    } finally {
      for (const spy of spies) spy.mockRestore();
      delete process.env.TOLLGATE_TEST_UPSTREAM_KEY;
      await new Promise((resolve) => upstream.server.close(resolve));
    }
  });
});
