import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config';
import { startServer, type RunningServer } from './start-server';

// Money stays exact whatever the hot path does: many requests at once through the real server
// (HTTP, the server's request listener, SQLite), streamed and not, and afterwards the ledger holds exactly one
// charge per request, equal to the cost the reply reported and to the price applied to its usage.
// sim-fast costs 150,000 / 600,000 micros per million prompt / completion tokens.
const ACCOUNTS = 8;
const PER_ACCOUNT = 10; // every plan admits 10 in flight per account
const CREDITS = 1_000_000_000;

interface Reported {
  accountId: string;
  requestId: string;
  usage: { prompt_tokens: number; completion_tokens: number; cost_micros: number };
}

describe('the ledger after many concurrent requests', () => {
  let dataDir: string;
  let server: RunningServer;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tollgate-ledger-exact-'));
    server = await startServer(loadConfig({ PORT: '0', ADMIN_PORT: '0', TOLLGATE_DATA_DIR: dataDir }), { log: () => {}, demo: false });
  });

  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function chat(key: string, accountId: string, index: number): Promise<Reported> {
    const stream = index % 2 === 0;
    const reply = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'sim-fast',
        messages: [{ role: 'user', content: `Request number ${index} ${'word '.repeat(index % 7)}`.trim() }],
        max_tokens: 3 + (index % 11),
        ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
    });
    expect(reply.status).toBe(200);
    const requestId = reply.headers.get('x-request-id') ?? '';
    if (!stream) return { accountId, requestId, usage: ((await reply.json()) as { usage: Reported['usage'] }).usage };
    const events = (await reply.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
      .map((event) => JSON.parse(event.slice(6)) as { usage?: Reported['usage'] });
    const usage = events.find((event) => event.usage)?.usage;
    expect(usage).toBeDefined();
    return { accountId, requestId, usage: usage! };
  }

  it('holds one charge per request, equal to its reported cost and to the price of its usage', async () => {
    const accounts = [];
    for (let index = 0; index < ACCOUNTS; index++) {
      const account = await server.store.createAccount({ plan: 'max' });
      await server.store.addCredits(account.id, CREDITS);
      accounts.push({ id: account.id, key: (await server.store.createKey(account.id, 'load')).key });
    }
    const reported = await Promise.all(
      accounts.flatMap((account, a) => Array.from({ length: PER_ACCOUNT }, (_, i) => chat(account.key, account.id, a * PER_ACCOUNT + i))),
    );
    for (const { usage } of reported) {
      expect(usage.cost_micros).toBe(Math.ceil((usage.prompt_tokens * 150_000 + usage.completion_tokens * 600_000) / 1_000_000));
    }
    for (const account of accounts) {
      const mine = reported.filter((each) => each.accountId === account.id);
      const entries = await server.store.entries(account.id);
      const charges = entries.filter((entry) => entry.kind === 'charge');
      expect(charges).toHaveLength(PER_ACCOUNT);
      const byRequest = new Map(charges.map((entry) => [entry.requestId, entry]));
      for (const each of mine) {
        const charge = byRequest.get(each.requestId);
        expect(charge?.micros).toBe(-each.usage.cost_micros);
        expect({ prompt: charge?.promptTokens, completion: charge?.completionTokens }).toEqual({
          prompt: each.usage.prompt_tokens,
          completion: each.usage.completion_tokens,
        });
      }
      const spent = mine.reduce((sum, each) => sum + each.usage.cost_micros, 0);
      expect(spent).toBeGreaterThan(0);
      expect(await server.store.getBalance(account.id)).toEqual({ balance: CREDITS - spent, held: 0, available: CREDITS - spent });
      expect(entries.reduce((sum, entry) => sum + entry.micros, 0)).toBe(CREDITS - spent);
    }
  });
});
