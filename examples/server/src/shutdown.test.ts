import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { startServer, type RunningServer } from './start-server';
import { serveChild } from './test-serve-child';
import { tempDataDirs } from './test-data-dir';

const newDataDir = tempDataDirs('shutdown');
/** The data dir made last: expectSettledAfterRestart reopens it. */
let lastDataDir = '';

function dataDir(): string {
  lastDataDir = newDataDir();
  return lastDataDir;
}

/** A server in this process; the grace period may be a fraction of a second here (the env takes whole seconds). */
async function start(graceSeconds: number, logs: Record<string, unknown>[]): Promise<RunningServer> {
  const config = { ...loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir() }), shutdownGraceSeconds: graceSeconds };
  return await startServer(config, { log: (line) => logs.push(line) });
}

/** Listening TCP servers of this process. */
function tcpServers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'TCPServerWrap').length;
}

/** The count once servers closed just before are gone: their handles go within two loop turns. */
async function tcpServersNow(): Promise<number> {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  return tcpServers();
}

/**
 * Waits until this process listens on exactly `count` TCP servers: a closed server's handle goes
 * a turn or two of the event loop after close(), which a busy machine may push past a fixed wait.
 */
async function expectTcpServers(count: number): Promise<void> {
  await expect.poll(tcpServers, { timeout: 5_000, interval: 2 }).toBe(count);
}

/** True when a TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

async function accountOf(server: RunningServer): Promise<string> {
  const found = await server.store.findKey(createHash('sha256').update(server.demoKey!).digest('hex'));
  return found!.account.id;
}

/** Opens a streamed chat and returns a reader that reads one chunk every `pauseMs`. */
async function openStream(server: RunningServer, maxTokens: number) {
  const response = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.demoKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'sim-fast',
      stream: true,
      max_tokens: maxTokens,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Tell me a story' }],
    }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const first = await reader.read();
  text += decoder.decode(first.value);
  /** Reads slowly to the end; resolves with the whole text and whether the connection failed. */
  const drain = async (pauseMs: number): Promise<{ text: string; failed: boolean }> => {
    try {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        const { done, value } = await reader.read();
        if (done) return { text, failed: false };
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      return { text, failed: true };
    }
  };
  return { drain };
}

/**
 * Restarts a server on the last data dir and checks the stopped one left its books settled: no
 * hold for the restart to release, nothing held, charged exactly `cost`, balance = sum of entries.
 */
async function expectSettledAfterRestart(account: string, balanceBefore: number, cost: number, logs: Record<string, unknown>[]): Promise<void> {
  const again = await startServer(
    { ...loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: lastDataDir }) },
    { log: (line) => logs.push(line), demo: false },
  );
  try {
    expect(logs.some((line) => line.msg === 'released holds of a previous run')).toBe(false);
    const after = await again.store.getBalance(account);
    expect(after.held).toBe(0);
    expect(after.balance).toBe(balanceBefore - cost);
    const entries = await again.store.entries(account, { limit: 1000 });
    expect(entries.reduce((sum, entry) => sum + entry.micros, 0)).toBe(after.balance);
  } finally {
    await again.close();
  }
}

/** The `usage` of the stream's usage chunk, if any. */
function usageOf(text: string): { prompt_tokens: number; completion_tokens: number } | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const chunk = JSON.parse(line.slice(6)) as { usage?: { prompt_tokens: number; completion_tokens: number } };
    if (chunk.usage) return chunk.usage;
  }
  return undefined;
}

/** sim-fast: $0.15 / $0.60 per million tokens, rounded up. */
const simFastCost = (prompt: number, completion: number) => Math.ceil((prompt * 150_000 + completion * 600_000) / 1_000_000);

describe('graceful shutdown, in process', () => {
  it('refuses new connections at once, lets an in-flight stream finish, settles it, and closes', async () => {
    const logs: Record<string, unknown>[] = [];
    const listeningBefore = await tcpServersNow();
    const server = await start(10, logs);
    await expectTcpServers(listeningBefore + 1);
    const account = await accountOf(server);
    const before = await server.store.getBalance(account);
    // 30 tokens at one word every 10 ms: about a third of a second, well inside the grace.
    const stream = await openStream(server, 30);
    expect(server.gateway.active).toBe(1);
    const startedAt = Date.now();
    const closed = server.close();
    let closeResolved = false;
    void closed.then(() => (closeResolved = true));
    expect(await refused(server.port)).toBe(true);
    const { text, failed } = await stream.drain(20);
    expect(failed).toBe(false);
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    await closed;
    expect(closeResolved).toBe(true);
    // Well inside the 10 s grace: close() waited for the stream, not for the grace period.
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(server.gateway.active).toBe(0);
    await expectTcpServers(listeningBefore);
    expect(logs.at(-1)).toEqual({ level: 'info', msg: 'stopped' });
    const record = logs.find((line) => line.msg === 'request' && line.path === '/v1/chat/completions')!;
    expect(record.outcome).toBe('done');
    const usage = usageOf(text)!;
    expect(usage.completion_tokens).toBe(30);
    expect([record.promptTokens, record.completionTokens]).toEqual([usage.prompt_tokens, usage.completion_tokens]);
    expect(record.costMicros).toBe(simFastCost(usage.prompt_tokens, usage.completion_tokens));

    // Settled: reopen the data dir's store through a new server to read the ledger after close.
    await expectSettledAfterRestart(account, before.balance, record.costMicros as number, logs);
  });

  it('cuts a stream longer than the grace after the grace and charges what was delivered', async () => {
    const logs: Record<string, unknown>[] = [];
    const listeningBefore = await tcpServersNow();
    const server = await start(0.3, logs);
    const account = await accountOf(server);
    const before = await server.store.getBalance(account);
    // 2,000 tokens would take about 20 s.
    const stream = await openStream(server, 2_000);
    const startedAt = Date.now();
    const reading = stream.drain(5);
    await server.close();
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(3_000);
    const { text, failed } = await reading;
    expect(failed).toBe(true);
    expect(text).not.toContain('[DONE]');
    expect(server.gateway.active).toBe(0);
    await expectTcpServers(listeningBefore);
    expect(logs.at(-1)).toEqual({ level: 'info', msg: 'stopped' });
    const record = logs.find((line) => line.msg === 'request' && line.path === '/v1/chat/completions')!;
    expect(record.outcome).toBe('client_gone');
    // Charged for the words sent before the cut: some, far fewer than the 2,000 asked for.
    const words = text.split('\n').filter((line) => line.startsWith('data: {') && line.includes('"content":"')).length;
    expect(words).toBeGreaterThan(5);
    expect(record.completionTokens as number).toBeGreaterThanOrEqual(words - 1);
    expect(record.completionTokens as number).toBeLessThan(200);
    expect(record.costMicros).toBe(simFastCost(record.promptTokens as number, record.completionTokens as number));

    await expectSettledAfterRestart(account, before.balance, record.costMicros as number, logs);
  });
  it('answers a keep-alive request in flight with Connection: close, so the next one is refused, not hung up', async () => {
    const server = await start(5, []);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const body = JSON.stringify({ model: 'sim-fast', max_tokens: 400, messages: [{ role: 'user', content: 'Hi' }] });
    const call = () =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const outgoing = request(
          `${server.url}/v1/chat/completions`,
          { method: 'POST', agent, headers: { authorization: `Bearer ${server.demoKey}`, 'content-type': 'application/json' } },
          (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection }));
          },
        );
        outgoing.on('error', reject);
        outgoing.end(body);
      });
    // Before shutdown the connection is kept alive.
    expect(await call()).toEqual({ status: 200, connection: 'keep-alive' });
    const inFlight = call();
    // Up to 5 s for the request to arrive, not 100 tries a busy machine may run through first.
    await expect.poll(() => server.gateway.active, { timeout: 5_000, interval: 2 }).toBe(1);
    const closed = server.close();
    expect(await inFlight).toEqual({ status: 200, connection: 'close' });
    const next = await call().catch((error: NodeJS.ErrnoException) => error.code);
    expect(next).toBe('ECONNREFUSED');
    await closed;
    agent.destroy();
  });
});

describe('graceful shutdown, as a child process', () => {
  it('on SIGTERM (and a second one, as Ctrl-C under npm sends) finishes the stream in flight, exits 0 and logs {"msg":"stopped"}', async () => {
    const dir = dataDir();
    const served = await serveChild({ TOLLGATE_DATA_DIR: dir, PORT: '0', ADMIN_PORT: '0', TOLLGATE_SHUTDOWN_GRACE: '10' });
    const { child, url, exited } = served;
    try {
      const key = (await served.demoKey())!;
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'sim-fast', stream: true, max_tokens: 30, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      await reader.read();
      child.kill('SIGTERM');
      // A second signal while stopping: ignored, the stream still ends whole.
      await new Promise((resolve) => setTimeout(resolve, 50));
      child.kill('SIGTERM');
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(await exited).toBe(0);
      const lines = served
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.at(-1)).toEqual({ level: 'info', msg: 'stopped' });
      const record = lines.find((line) => line.msg === 'request' && line.path === '/v1/chat/completions')!;
      expect([record.status, record.outcome, record.completionTokens]).toEqual([200, 'done', 30]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});
