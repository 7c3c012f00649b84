import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { creditsToMicros, formatMicros, main } from './cli';
import { BIN, serveChild } from './test-serve-child';
import { tempDataDirs } from './test-data-dir';

const dataDir = tempDataDirs('cli');

const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** The real binary, as a newcomer runs it. */
function spawnCli(dir: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { env: { ...process.env, TOLLGATE_DATA_DIR: dir }, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The same CLI in this process (fast): `main()` with the data dir in the environment. */
async function cli(dir: string, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  const saved = process.env.TOLLGATE_DATA_DIR;
  process.env.TOLLGATE_DATA_DIR = dir;
  let stdout = '';
  let stderr = '';
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => {
    stderr += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    const status = await main(args, (text) => (stdout += `${text}\n`));
    return { status, stdout, stderr };
  } finally {
    process.stderr.write = write;
    if (saved === undefined) delete process.env.TOLLGATE_DATA_DIR;
    else process.env.TOLLGATE_DATA_DIR = saved;
  }
}

async function json<T>(dir: string, ...args: string[]): Promise<T> {
  const result = await cli(dir, ...args);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as T;
}

describe('credits parsing and money display', () => {
  it('turns credits into micro-dollars without floating point', () => {
    expect(creditsToMicros('1')).toBe(10_000);
    expect(creditsToMicros('0.0001')).toBe(1);
    expect(creditsToMicros('12.5')).toBe(125_000);
    expect(() => creditsToMicros('0.00001')).toThrow(/4 decimals/);
    expect(() => creditsToMicros('-1')).toThrow();
    expect(formatMicros(-1_234_567)).toBe('-$1.234567');
  });
});

describe('tollgate CLI', () => {
  it('runs as the real binary: keys create prints {"id","name","key"}', async () => {
    const dir = dataDir();
    const account = await json<{ id: string }>(dir, 'accounts', 'create', '--json');
    const result = spawnCli(dir, 'keys', 'create', '--account', account.id, '--name', 'ci');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const key = JSON.parse(result.stdout) as Record<string, string>;
    expect(Object.keys(key)).toEqual(['id', 'name', 'key']);
    expect(key.key).toMatch(/^sk_svc_[A-Za-z0-9]{43}$/);
  }, 60_000);

  it('manages accounts, credits, keys and shows usage', async () => {
    const dir = dataDir();
    const account = await json<{ id: string; plan: string; state: string }>(dir, 'accounts', 'create', '--plan', 'pro', '--json');
    expect(account).toMatchObject({ plan: 'pro', state: 'active' });
    const credited = await json<{ balance: number }>(dir, 'credits', 'add', '--account', account.id, '--credits', '2.5', '--json');
    expect(credited.balance).toBe(25_000);
    const key = await json<{ id: string; name: string; key: string }>(dir, 'keys', 'create', '--account', account.id, '--name', 'laptop');
    expect(Object.keys(key)).toEqual(['id', 'name', 'key']);
    expect(key.name).toBe('laptop');
    expect(key.key).toMatch(/^sk_svc_[A-Za-z0-9]{43}$/);
    const keys = await json<{ id: string; prefix: string }[]>(dir, 'keys', 'list', '--account', account.id, '--json');
    expect(keys.map((listed) => listed.id)).toEqual([key.id]);
    expect(JSON.stringify(keys)).not.toContain(key.key);
    expect((await json<{ revoked: boolean }>(dir, 'keys', 'revoke', key.id, '--json')).revoked).toBe(true);
    expect((await json<{ state: string }>(dir, 'accounts', 'set-state', account.id, 'disabled', '--json')).state).toBe('disabled');
    expect((await json<{ plan: string }>(dir, 'accounts', 'set-plan', account.id, 'max', '--json')).plan).toBe('max');
    const usage = await json<{ balance: number; entries: { kind: string; micros: number }[] }>(dir, 'usage', '--account', account.id, '--json');
    expect(usage.balance).toBe(25_000);
    expect(usage.entries.map((entry) => [entry.kind, entry.micros])).toEqual([['credit', 25_000]]);
    const table = await cli(dir, 'usage', '--account', account.id);
    expect(table.stdout).toContain('balance $0.025000');
  });

  it('lists accounts in pages, gets and renames keys, and adds a credit once per idempotency key', async () => {
    const dir = dataDir();
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) ids.push((await json<{ id: string }>(dir, 'accounts', 'create', '--json')).id);
    const first = await json<{ data: { id: string }[]; next_cursor: string | null }>(dir, 'accounts', 'list', '--limit', '2', '--json');
    expect(first.data).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await json<{ data: { id: string }[]; next_cursor: string | null }>(
      dir,
      'accounts',
      'list',
      '--limit',
      '2',
      '--cursor',
      first.next_cursor!,
      '--json',
    );
    expect(second.next_cursor).toBeNull();
    expect([...first.data, ...second.data].map((account) => account.id).sort()).toEqual([...ids].sort());
    expect((await cli(dir, 'accounts', 'list', '--limit', '2')).stdout).toContain('more: tollgate accounts list --cursor ');
    const [id] = ids as [string];
    expect((await json<{ id: string; plan: string }>(dir, 'accounts', 'get', id, '--json')).plan).toBe('free');

    const key = await json<{ id: string; key: string }>(dir, 'keys', 'create', '--account', id, '--name', 'old');
    expect((await json<{ name: string }>(dir, 'keys', 'rename', key.id, 'new name', '--json')).name).toBe('new name');
    const got = await json<Record<string, unknown>>(dir, 'keys', 'get', key.id, '--json');
    expect(got).toMatchObject({ id: key.id, name: 'new name', accountId: id });
    expect(JSON.stringify(got)).not.toContain(key.key.slice(11));
    const renamed = await cli(dir, 'keys', 'rename', key.id, '');
    expect(renamed.status).toBe(2);
    expect(renamed.stderr).toContain('name must be');

    const once = await json<{ added: number; balance: number; replayed: boolean; entryId: string }>(
      dir,
      'credits',
      'add',
      '--account',
      id,
      '--credits',
      '3',
      '--idempotency-key',
      'invoice-42',
      '--json',
    );
    expect(once).toMatchObject({ added: 30_000, balance: 30_000, replayed: false });
    const again = await json<{ added: number; balance: number; replayed: boolean; entryId: string }>(
      dir,
      'credits',
      'add',
      '--account',
      id,
      '--credits',
      '3',
      '--idempotency-key',
      'invoice-42',
      '--json',
    );
    expect(again).toMatchObject({ added: 0, balance: 30_000, replayed: true, entryId: once.entryId });
    const text = await cli(dir, 'credits', 'add', '--account', id, '--credits', '3', '--idempotency-key', 'invoice-42');
    expect(text.stdout).toContain('nothing added');
    const conflict = await cli(dir, 'credits', 'add', '--account', id, '--credits', '4', '--idempotency-key', 'invoice-42');
    expect(conflict.status).toBe(1);
    const missing = await cli(dir, 'keys', 'revoke', 'key_nope');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('No key');
  });

  it('keys budget sets, shows and clears a key spend limit; bad values are usage errors', async () => {
    const dir = dataDir();
    const account = await json<{ id: string }>(dir, 'accounts', 'create', '--json');
    const key = await json<{ id: string }>(dir, 'keys', 'create', '--account', account.id, '--name', 'ci');
    const set = await json<{ id: string; budget: Record<string, unknown> }>(dir, 'keys', 'budget', key.id, '--micros', '5000000', '--period', 'day', '--json');
    expect(set.id).toBe(key.id);
    expect(set.budget).toEqual({ micros: 5_000_000, period: 'day', spent: 0, periodStart: expect.any(Number) });
    const text = await cli(dir, 'keys', 'budget', key.id, '--micros', '250', '--period', 'total');
    expect(text.status).toBe(0);
    expect(text.stdout).toBe(`key ${key.id} may spend $0.000250 in total (spent $0.000000)\n`);
    expect((await cli(dir, 'keys', 'get', key.id)).stdout).toContain('$0.000250 in total (spent $0.000000)');
    expect((await json<{ budget?: unknown }[]>(dir, 'keys', 'list', '--account', account.id, '--json'))[0]?.budget).toMatchObject({ micros: 250 });
    const cleared = await cli(dir, 'keys', 'budget', key.id, '--clear');
    expect(cleared.stdout).toBe(`key ${key.id} has no budget: the balance is its only limit\n`);
    expect((await json<{ budget?: unknown }>(dir, 'keys', 'get', key.id, '--json')).budget).toBeUndefined();
    for (const args of [
      ['--micros', '1.5', '--period', 'day'],
      ['--micros', '-1', '--period', 'day'],
      ['--micros', '10', '--period', 'week'],
      ['--micros', '10'],
      ['--period', 'day'],
      ['--clear', '--micros', '10'],
    ]) {
      const refused = await cli(dir, 'keys', 'budget', key.id, ...args);
      expect(refused.status, args.join(' ')).toBe(2);
    }
    expect((await cli(dir, 'keys', 'budget', key.id, '--micros', '10', '--period', 'week')).stderr).toContain('period must be one of total, day, month');
    const missing = await cli(dir, 'keys', 'budget', 'key_nope', '--micros', '10', '--period', 'day');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('No key');
  });

  it('refuses to serve a catalogue with a malformed price: exit code 2 and the model named', async () => {
    const dir = dataDir();
    const catalogue = join(dir, 'catalogue.json');
    writeFileSync(
      catalogue,
      JSON.stringify({
        providers: { up: { kind: 'openai-compatible', baseURL: 'http://127.0.0.1:9/v1' } },
        models: [
          {
            id: 'cheap',
            type: 'chat',
            provider: 'up',
            max_output_tokens: 10,
            price: { prompt_micros_per_mtok: 1.5, completion_micros_per_mtok: 1, min_hold_micros: 0 },
          },
        ],
      }),
    );
    process.env.TOLLGATE_CATALOGUE = catalogue;
    try {
      const result = await cli(dir, 'serve');
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/^tollgate: .*cheap/);
    } finally {
      delete process.env.TOLLGATE_CATALOGUE;
    }
  });

  it('refuses a wrong command line with a clear message and exit code 2', async () => {
    const dir = dataDir();
    const result = await cli(dir, 'accounts', 'create', '--plan', 'gold');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--plan must be free, plus, pro or max');
    expect((await cli(dir, 'frobnicate')).status).toBe(2);
    // An option the command does not read is refused before anything is done: a misspelt key must not credit twice.
    const account = (await json<{ id: string }>(dir, 'accounts', 'create', '--json')).id;
    const typo = await cli(dir, 'credits', 'add', '--account', account, '--credits', '1', '--idempotency_key', 'pay-77');
    expect([typo.status, typo.stderr]).toEqual([2, 'tollgate: unknown option --idempotency_key for "credits add" (see tollgate --help)\n']);
    expect((await json<{ balance: number }>(dir, 'usage', '--account', account, '--json')).balance).toBe(0);
    // `--name=value` keeps everything after the first `=`: two keys that differ after it are two credits.
    for (const key of ['order=1', 'order=2'])
      expect((await cli(dir, 'credits', 'add', `--account=${account}`, '--credits=1', `--idempotency-key=${key}`)).status).toBe(0);
    expect((await json<{ balance: number }>(dir, 'usage', '--account', account, '--json')).balance).toBe(20_000);
  });
});

/** `tollgate serve` on a data dir; with `demo`, waits for the demo key it prints on first start. */
async function serve(dir: string, demo: boolean): Promise<{ child: ChildProcess; url: string; demoKey: string | undefined }> {
  const served = await serveChild({ TOLLGATE_DATA_DIR: dir, PORT: '0', ADMIN_PORT: '0' });
  children.push(served.child);
  if (demo) return { child: served.child, url: served.url, demoKey: await served.demoKey() };
  // No key expected: the child writes it before it can answer anything, so one answer proves it
  // would be in the pipe by now; a few loop turns let the pipe be read.
  await fetch(`${served.url}/v1/models`);
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
  return { child: served.child, url: served.url, demoKey: await served.demoKey(0) };
}

describe('crash safety', () => {
  it('after kill -9 mid-request, a restart releases the open holds and the ledger adds up', async () => {
    const dir = dataDir();
    const first = await serve(dir, true);
    expect(first.demoKey).toBeDefined();
    const headers = { authorization: `Bearer ${first.demoKey}`, 'content-type': 'application/json' };
    // Three streams left unread: each holds credit and a slot when the process dies.
    const readers = await Promise.all(
      [0, 1, 2].map(async () => {
        const response = await fetch(`${first.url}/v1/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: 'sim-fast', stream: true, max_tokens: 2000, messages: [{ role: 'user', content: 'Tell me a long story' }] }),
        });
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        await reader.read();
        return reader;
      }),
    );
    const marker = JSON.parse(readFileSync(join(dir, 'demo-account.json'), 'utf8')) as { accountId: string };
    const during = await json<{ held: number }>(dir, 'usage', '--account', marker.accountId, '--json');
    expect(during.held).toBeGreaterThan(0);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    for (const reader of readers) await reader.cancel().catch(() => {});

    const second = await serve(dir, false);
    expect(second.demoKey).toBeUndefined();
    const usage = await json<{ balance: number; held: number; available: number; entries: { micros: number }[] }>(
      dir,
      'usage',
      '--account',
      marker.accountId,
      '--limit',
      '1000',
      '--json',
    );
    expect(usage.held).toBe(0);
    expect(usage.available).toBe(usage.balance);
    expect(usage.entries.reduce((sum, entry) => sum + entry.micros, 0)).toBe(usage.balance);
    // Keys and balances survived the restart.
    const models = await fetch(`${second.url}/v1/models`, { headers });
    expect(models.status).toBe(200);
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  }, 60_000);
});
